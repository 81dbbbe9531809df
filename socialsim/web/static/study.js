"use strict";
// A participant's page: consent, instructions, quiz, lobby, then the game's own seat page, and
// the end. The participant's token rides in the URL fragment (never sent to the server but as
// the Authorization header) and in this browser's storage, so a reload resumes.
(function () {
  const $ = (id) => document.getElementById(id);
  const KEY = "socialsim-study-token";
  let token = fragment().get("token") || localStorage.getItem(KEY) || "";
  let shown = "";

  function keep(t) {
    token = t;
    localStorage.setItem(KEY, t);
    history.replaceState(null, "", "/study#token=" + encodeURIComponent(t));
  }

  async function join() {
    const info = await api("GET", "/api/study/info", "");
    const parameter = (info.data && info.data.id_parameter) || "participant";
    const panelId = new URLSearchParams(location.search).get(parameter) || "";
    const { status, data } = await api("POST", "/api/study/arrive", "", { panel_id: panelId });
    if (status !== 200) { $("stage-text").textContent = data.error || ("error " + status); return false; }
    keep(data.token);
    return true;
  }

  function button(text, id, onClick, primary) {
    const b = el("button", { type: "button", id, class: primary ? "primary" : "" }, text);
    b.addEventListener("click", onClick);
    return b;
  }

  async function send(path, body) {
    $("error").textContent = "";
    const { status, data } = await api("POST", path, token, body);
    if (status !== 200) { $("error").textContent = data.error || ("error " + status); return; }
    render(data);
  }

  function markdown(html) {
    // the study's own pages, rendered by the server with raw HTML off
    const box = el("div", { class: "page" });
    box.innerHTML = html;
    return box;
  }

  function quiz(state) {
    const form = el("form", { id: "quiz" });
    state.quiz.forEach((q, i) => {
      const wrong = state.wrong.includes(i);
      const set = el("fieldset", { class: "field" }, el("legend", {}, (i + 1) + ". " + q.question,
        wrong ? el("span", { class: "tag bad" }, " ✗ not right, try again") : null));
      q.choices.forEach((c, j) => {
        const id = "q" + i + "-" + j;
        set.append(el("label", { for: id, class: "choice" },
          el("input", { type: "radio", name: "q" + i, id, value: c, required: "required" }), " " + c));
      });
      form.append(set);
    });
    form.append(el("button", { class: "primary", type: "submit", id: "quiz-submit" }, "Check my answers"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const answers = state.quiz.map((_, i) => {
        const picked = form.querySelector("input[name=q" + i + "]:checked");
        return picked ? picked.value : "";
      });
      send("/api/study/quiz", { answers });
    });
    return form;
  }

  function render(state) {
    const text = JSON.stringify(state);
    if (text === shown) return;
    shown = text;
    document.body.dataset.stage = state.stage;
    $("heading").textContent = state.study;
    $("who").textContent = "participant " + state.participant;
    $("leave").hidden = ["consent", "done", "dropped"].includes(state.stage);  // consent: "I do not agree"
    const box = $("stage");
    if (state.stage === "consent") {
      const agree = el("input", { type: "checkbox", id: "agree" });
      box.replaceChildren(el("h1", {}, "Consent"), markdown(state.page),
        el("label", { for: "agree", class: "choice" }, agree, " I have read this and agree to take part"),
        el("p", {}, button("Continue", "consent", () => {
          if (!agree.checked) { $("error").textContent = "Tick the box to agree, or choose not to take part."; agree.focus(); return; }
          send("/api/study/consent", { agree: true });
        }, true), " ", button("I do not agree", "decline", () => send("/api/study/consent", { agree: false }))));
    } else if (state.stage === "instructions") {
      box.replaceChildren(el("h1", {}, "Instructions"), markdown(state.page),
        el("p", {}, button("I have read the instructions", "read", () => send("/api/study/instructions", {}), true)));
    } else if (state.stage === "quiz") {
      const tries = state.max_attempts ? " (attempt " + (state.attempts + 1) + " of " + state.max_attempts + ")" : "";
      box.replaceChildren(el("h1", {}, "A few questions" + tries), quiz(state));
    } else if (state.stage === "lobby") {
      const game = state.games > 1 ? " for game " + (state.games_played + 1) + " of " + state.games : "";
      box.replaceChildren(el("h1", {}, "Waiting room"),
        el("p", { class: "status" }, el("span", { class: "spinner", "aria-hidden": "true" }),
          "Waiting for other participants" + game + "…"),
        el("p", { class: "muted" }, state.paused ? "The study is paused for a moment." :
          "You will wait at most about " + Math.round(state.wait_cap) + " s; then the game starts with a computer player in any empty seat."));
    } else if (state.stage === "playing" && state.seat) {
      const s = state.seat;
      const link = "/seat#session=" + encodeURIComponent(s.session) + "&seat=" + encodeURIComponent(s.seat) +
        "&token=" + encodeURIComponent(s.token) + "&study=1";
      box.replaceChildren(el("h1", {}, "Your game is ready"), el("p", {}, el("a", { href: link, id: "play" }, "Go to your game")));
      location.assign(link);
    } else if (state.stage === "done") {
      const lines = [el("h1", {}, "Thank you: you have finished"),
        el("p", {}, "Your points: " + state.points + ". Your payment: " + state.payment.toFixed(2) + " " + state.currency + ".")];
      if (state.code) lines.push(el("p", {}, "Your completion code: ", el("code", { id: "code" }, state.code)));
      if (state.redirect) lines.push(el("p", {}, el("a", { href: state.redirect, id: "redirect" }, "Return to the panel")));
      box.replaceChildren(...lines);
    } else if (state.stage === "dropped") {
      box.replaceChildren(el("h1", {}, "Your part in the study has ended"),
        el("p", {}, "Why: " + state.reason + "."),
        el("p", {}, "Your payment: " + (state.payment || 0).toFixed(2) + " " + state.currency + "."));
    } else {
      box.replaceChildren(el("p", {}, "Starting your game…"));
    }
    const first = box.querySelector("input,button,a");
    if (first && !box.contains(document.activeElement)) first.focus();
  }

  async function poll() {
    const { status, data } = await api("GET", "/api/study/me", token);
    if (status === 403) {
      localStorage.removeItem(KEY);
      $("stage-text") && ($("stage-text").textContent = data.error);
      return;
    }
    if (status === 200) render(data);
    if (!(data && ["done", "dropped"].includes(data.stage))) setTimeout(poll, 1000);
  }

  $("leave").addEventListener("click", () => {
    if (confirm("Leave the study? You are paid for what you have done so far.")) send("/api/study/leave", {});
  });
  (async () => {
    if (!token && !(await join())) return;
    keep(token);
    poll();
  })();
})();
