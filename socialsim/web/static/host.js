"use strict";
(function () {
  const token = fragment().get("host") || "";
  const select = document.getElementById("experiment");
  const seatsBox = document.getElementById("seats");
  const error = document.getElementById("error");
  let offered = [];

  function showSeats() {
    const chosen = offered.find((e) => e.name === select.value);
    seatsBox.replaceChildren();
    if (!chosen) return;
    chosen.seats.forEach((seat) => {
      const box = el("input", { type: "checkbox", value: seat, id: "seat-" + seat });
      if (seat === chosen.offered_seat) box.checked = true;
      seatsBox.append(el("label", { class: "seat", for: "seat-" + seat }, box, " ", seat));
    });
  }

  async function load() {
    const { status, data } = await api("GET", "/api/experiments", token);
    if (status !== 200) {
      error.textContent = "This page needs the host link that socialsim serve printed (" + (data.error || status) + ").";
      return;
    }
    offered = data.experiments;
    for (const e of offered) select.append(el("option", { value: e.name }, e.name + " — " + e.game));
    showSeats();
  }

  async function create() {
    error.textContent = "";
    const humans = [...seatsBox.querySelectorAll("input:checked")].map((b) => b.value);
    const seedText = document.getElementById("seed").value.trim();
    const chosen = offered.find((e) => e.name === select.value);
    const body = chosen && chosen.upload ? { upload: chosen.upload, humans } : { experiment: select.value, humans };
    if (seedText) body.seed = Number(seedText);
    const { status, data } = await api("POST", "/api/sessions", token, body);
    if (status !== 200) { error.textContent = data.error || ("error " + status); return; }
    const list = document.getElementById("links");
    list.replaceChildren();
    for (const [seat, link] of Object.entries(data.links)) {
      const url = link;  // the address people reach: serve --url, else the one this page used
      const copy = el("button", { class: "small", type: "button" }, "Copy");
      copy.addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(url));
      list.append(el("li", { "data-seat": seat },
        el("strong", {}, seat), el("a", { href: url, target: "_blank", rel: "noopener" }, "open"), copy,
        el("input", { class: "link", readonly: "readonly", value: url })));
    }
    const ai = Object.entries(data.seats).filter(([, kind]) => kind !== "human");
    list.append(el("li", { class: "muted" }, "Agents: " + ai.map(([s, k]) => s + " (" + k + ")").join(", ")));
    document.getElementById("results").textContent = data.results;
    document.getElementById("result").hidden = false;
  }

  async function check() {
    error.textContent = "";
    const text = document.getElementById("upload").value;
    const { status, data } = await api("POST", "/api/experiments/check", token, { upload: text });
    if (status !== 200) { error.textContent = data.error || ("error " + status); return; }
    offered = offered.filter((e) => !e.upload);
    offered.push({ name: "upload:" + data.name, game: data.game, seats: data.seats, offered_seat: data.offered_seat, upload: text });
    select.querySelectorAll("option[data-upload]").forEach((o) => o.remove());
    select.append(el("option", { value: "upload:" + data.name, "data-upload": "1" }, "uploaded: " + data.name + " — " + data.game));
    select.value = "upload:" + data.name;
    showSeats();
  }

  select.addEventListener("change", showSeats);
  document.getElementById("check").addEventListener("click", check);
  document.getElementById("create").addEventListener("click", create);
  load();
})();
