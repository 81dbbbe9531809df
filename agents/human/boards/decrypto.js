"use strict";
// Decrypto's seat page: the scores, the code and hints of this turn, the hint history under
// each keyword (hidden from the interceptor) and the last reveal. The view is what
// socialsim.agents.human.decrypto.view built from the seat's inbox and info.
(function () {
  function board(v) {
    const parts = [];
    const keywords = v.keywords || null;
    parts.push(el("section", { class: "card scores" },
      el("div", { class: "score" }, el("span", { class: "label" }, "Turn"), el("span", { class: "big" }, v.turn + " / " + v.max_turns)),
      el("div", { class: "score" }, el("span", { class: "label" }, "Miscommunications"), pips(v.miscommunications, v.tokens_to_lose, "bad")),
      el("div", { class: "score" }, el("span", { class: "label" }, "Interceptions"), pips(v.interceptions, v.tokens_to_lose, "bad"))));
    if (v.code) {
      parts.push(card("Your secret code",
        el("div", { class: "code" }, ...v.code.split("-").map((d) => el("span", { class: "digit" }, d)))));
    }
    if (v.hints) {
      parts.push(card("This turn's hints",
        el("ol", { class: "hints", type: "a" }, ...v.hints.map((h) => el("li", {}, h)))));
    }
    const top = parts.splice(0);
    const columns = v.hint_history.map((hints, i) =>
      el("div", { class: "column" },
        el("div", { class: "keyword" + (keywords ? "" : " hidden-word") },
          el("span", { class: "num" }, String(i + 1)), keywords ? keywords[i] : "?"),
        hints.length ? el("ul", {}, ...hints.map((h) => el("li", {}, h))) : el("p", { class: "muted" }, "no hints yet")));
    parts.push(card(keywords ? "Keywords and their hints" : "Hint history by keyword (the keywords are secret)",
      el("div", { class: "columns" }, ...columns)));
    const last = v.last_turn;
    if (last) {
      const verdicts = [];
      if (last.miscommunication) verdicts.push(el("span", { class: "tag bad" }, "miscommunication"));
      if (last.interception) verdicts.push(el("span", { class: "tag bad" }, "intercepted"));
      if (!verdicts.length) verdicts.push(el("span", { class: "tag good" }, "no token"));
      parts.push(card("Turn " + last.turn + " revealed",
        el("dl", { class: "facts" },
          el("dt", {}, "Code"), el("dd", {}, last.code),
          el("dt", {}, "Hints"), el("dd", {}, last.hints.join(" · ")),
          el("dt", {}, "Decoder guessed"), el("dd", {}, last.decoder_guess),
          el("dt", {}, "Interceptor guessed"), el("dd", {}, last.interceptor_guess || "nothing")),
        el("div", {}, ...verdicts)));
    }
    return [top, parts];
  }

  // the last view, now with the keywords revealed and the final reveal and tokens
  function final(view, e) {
    const shown = Object.assign({}, view, { keywords: e.keywords, last_turn: e.last_turn,
      miscommunications: e.miscommunications, interceptions: e.interceptions, code: null, hints: null,
      turn: e.turns, hint_history: view.hint_history.map((h) => h.slice()) });
    if (e.last_turn && view.turn === e.last_turn.turn) {
      const code = e.last_turn.code.split("-").map(Number);
      code.forEach((d, j) => shown.hint_history[d - 1].push(e.last_turn.hints[j]));
    }
    return shown;
  }

  registerBoard("decrypto", {
    heading: (v) => "Decrypto · you are the " + v.title,
    board,
    final,
    won: (e) => e.won,
    verdict: (e) => (e.won ? "Your side wins." : "Your side loses."),
  });
})();
