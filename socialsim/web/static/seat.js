"use strict";
(function () {
  const params = fragment();
  const sid = params.get("session") || "";
  const seat = params.get("seat") || "";
  const token = params.get("token") || "";
  const base = "/api/sessions/" + encodeURIComponent(sid) + "/seats/" + encodeURIComponent(seat);
  const $ = (id) => document.getElementById(id);
  let shownVersion = -1;
  let sending = false;
  let over = false;
  let socket = null;
  // a study's game (study.js sends people here): back to the study at the end, and a way out
  const study = params.get("study") === "1" ? (localStorage.getItem("socialsim-study-token") || "") : "";

  function studyLinks() {
    if (!study || $("study-back")) return;
    const back = el("a", { href: "/study#token=" + encodeURIComponent(study), id: "study-back", class: "primary" }, "Continue the study");
    $("main").prepend(el("p", { class: "card" }, back));
  }
  if (study) {
    const leave = el("button", { type: "button", id: "study-leave" }, "Leave the study");
    leave.addEventListener("click", async () => {
      if (!confirm("Leave the study? A computer player takes your seat from this turn on.")) return;
      await api("POST", "/api/study/leave", study, {});
      location.assign("/study#token=" + encodeURIComponent(study));
    });
    document.querySelector("header.bar").append(leave);
  }

  function minutes(seconds) {
    return seconds >= 60 ? Math.round(seconds / 60) + " min" : seconds + " s";
  }

  function showRules(view) {
    if (!view || !view.rules || !$("rules").hidden) return;
    $("rules-list").replaceChildren(...view.rules.map((line) => el("li", {}, line)));
    $("rules").hidden = false;
    $("rules").open = view.turn === 1;
  }

  function showForm(request, error) {
    $("action-title").textContent = request.title;
    $("action-help").textContent = request.help || "";
    $("action-error").textContent = error || "";
    const form = $("form");
    form.replaceChildren();
    for (const f of request.fields) {
      let input;
      if (f.choices.length) {
        // no choice is made for the person: a preselected move would bias a study
        input = el("select", { name: f.name, id: "field-" + f.name, required: "required" },
          el("option", { value: "", disabled: "disabled", selected: "selected" }, "choose…"),
          ...f.choices.map((c) => el("option", { value: c }, c)));
      } else {
        input = el("input", { name: f.name, id: "field-" + f.name, placeholder: f.placeholder, maxlength: String(f.max_length), autocomplete: "off" });
      }
      form.append(el("label", { class: "field", for: "field-" + f.name }, f.label, input));
    }
    form.append(el("button", { class: "primary", type: "submit", id: "submit" }, "Send"));
    $("action").hidden = false;
    const first = form.querySelector("input,select");
    if (first) first.focus();
  }

  async function submit(event) {
    event.preventDefault();
    if (sending) return;
    const answer = {};
    for (const input of $("form").querySelectorAll("input,select")) answer[input.name] = input.value;
    sending = true;
    const asked = shownVersion;
    $("submit").disabled = true;
    const { status, data } = await api("POST", base + "/answer", token, { answer });
    sending = false;
    // a success shows through the pushed state (the next turn may already be on the page)
    if (status === 200 || shownVersion !== asked) return;
    $("submit").disabled = false;
    $("action-error").textContent = data.error || ("error " + status);
  }

  function render(state) {
    if (state.version === shownVersion) return;
    shownVersion = state.version;
    document.body.dataset.version = String(state.version);
    document.body.dataset.status = state.status;
    const view = state.view || null;
    const game = BOARDS[state.board];  // the game's board (its view module's script)
    if (view) $("heading").textContent = game.heading(view, seat);
    else $("heading").textContent = "you are the " + seat;
    document.title = "socialsim · " + seat;
    const board = $("board");
    const status = $("status");
    if (state.status === "over") {
      over = true;  // nothing changes any more: the badge says so and the page stops listening
      $("connection").textContent = "game over"; $("connection").className = "pill over";
      if (socket) socket.close();
      const e = state.ending;
      const finished = e.status === "done";  // an abandoned or failed game has no winner
      status.className = "card status over" + (finished ? (game.won(e) ? " won" : " lost") : "");
      const lines = [el("strong", {}, "Game over. "), e.outcome + " "];
      lines.push(finished ? game.verdict(e) : "Nobody wins it.");
      status.replaceChildren(...lines);
      if (view) {
        // a finished game shows its last view as it ended (the game's final); else as it was
        const [top, rest] = game.board(finished ? game.final(view, e, seat) : view);
        $("top").replaceChildren(...top);
        board.replaceChildren(...rest);
      }
      $("rules").open = false;
      $("action").hidden = true;
      studyLinks();
      showTranscript();
      return;
    }
    if (view) {
      showRules(view);
      const [top, rest] = game.board(view);
      $("top").replaceChildren(...top);
      board.replaceChildren(...rest);
    }
    if (state.status === "your_turn") {
      status.className = "card status turn";
      const text = el("span", {}, state.request.title);
      if (state.idle_timeout) {
        const after = study ? " · a computer player takes your seat if you make no move within " : " · the game ends if you make no move within ";
        text.append(el("span", { class: "muted", id: "idle" }, after + minutes(state.idle_timeout)));
      }
      status.replaceChildren(el("strong", {}, "Your turn."), text);
      showForm(state.request, state.error);
    } else {
      status.className = "card status";
      status.replaceChildren(el("div", { class: "spinner" }), el("span", {}, "Waiting for " + state.waiting_for + "…"));
      $("action").hidden = true;
    }
  }

  async function showTranscript() {
    if ($("transcript")) return;
    const { status, data } = await api("GET", base + "/transcript", token);
    if (status !== 200) return;
    const lines = data.messages.map((m) => el("li", {},
      el("span", { class: "who" }, "turn " + m.turn + " · " + m.kind + ": "),
      el("code", {}, JSON.stringify(m.payload))));
    const file = URL.createObjectURL(new Blob([JSON.stringify(data, null, 1)], { type: "application/json" }));
    const name = "transcript_" + sid + "_" + seat + ".json";
    $("main").append(el("details", { class: "card rules", id: "transcript" },
      el("summary", {}, "Transcript (" + lines.length + " messages you could see)"),
      el("p", {}, el("a", { href: file, download: name, id: "transcript-file" }, "Save it as " + name)),
      el("ol", { class: "transcript" }, ...lines)));
    const over = document.querySelector(".status.over");
    if (over) {
      // a button, not an href="#...": the URL fragment holds this seat's token
      const link = el("button", { type: "button", class: "link", id: "transcript-link" }, "Read the transcript");
      link.addEventListener("click", () => { $("transcript").open = true; $("transcript").scrollIntoView(); });
      over.append(" ", link);
    }
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + base + "/live?token=" + encodeURIComponent(token));
    socket.addEventListener("open", () => { if (!over) { $("connection").textContent = "live"; $("connection").className = "pill live"; } });
    socket.addEventListener("message", (m) => render(JSON.parse(m.data)));
    socket.addEventListener("close", async () => {
      if (over) return;
      $("connection").textContent = "reconnecting"; $("connection").className = "pill";
      const { status, data } = await api("GET", base + "/state", token);
      if (status === 403) { $("status-text") && ($("status-text").textContent = data.error); $("connection").textContent = "refused"; return; }
      if (status === 200) render(data);
      if (!(data && data.status === "over")) setTimeout(connect, 1000);
    });
  }

  $("form").addEventListener("submit", submit);
  connect();
})();
