"use strict";
// The experimenter's page: the host token rides in the URL fragment (never sent but as the
// Authorization header); the counts refresh every two seconds.
(function () {
  const $ = (id) => document.getElementById(id);
  const token = fragment().get("monitor") || "";
  let paused = false;

  function facts(id, pairs) {
    $(id).replaceChildren(...pairs.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))]));
  }

  function render(m) {
    paused = m.paused;
    $("heading").textContent = "monitor · " + m.study;
    $("state").textContent = m.ended ? "ended" : (m.paused ? "lobby paused" : "open");
    $("pause").textContent = m.paused ? "Resume the lobby" : "Pause the lobby";
    $("pause").disabled = m.ended;
    $("end").disabled = m.ended;
    facts("stages", [["all", m.participants], ...Object.entries(m.stages)]);
    facts("treatments", Object.entries(m.treatments));
    facts("games", [["games started", m.games_started], ["games running", m.games_running],
      ["handovers", m.handovers], ["paid so far", m.paid.toFixed(2) + " " + m.currency]]);
  }

  async function poll() {
    const { status, data } = await api("GET", "/api/study/monitor", token);
    if (status !== 200) { $("error").textContent = data.error || ("error " + status); return; }
    $("error").textContent = "";
    render(data);
    setTimeout(poll, 2000);
  }

  async function control(body) {
    const { status, data } = await api("POST", "/api/study/monitor", token, body);
    if (status !== 200) { $("error").textContent = data.error || ("error " + status); return; }
    render(data);
  }

  $("pause").addEventListener("click", () => control({ paused: !paused }));
  $("end").addEventListener("click", () => { if (confirm("End the study? New arrivals are turned away.")) control({ end: true }); });
  $("export").addEventListener("click", async () => {
    const response = await fetch("/api/study/export", { headers: { "Authorization": "Bearer " + token } });
    if (!response.ok) { $("error").textContent = "error " + response.status; return; }
    const link = el("a", { href: URL.createObjectURL(await response.blob()), download: "participants.csv" });
    document.body.append(link); link.click(); link.remove();
  });
  poll();
})();
