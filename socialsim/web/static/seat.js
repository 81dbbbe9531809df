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

  function pips(count, of, kind) {
    const row = el("span", { class: "pips " + kind, title: count + " of " + of });
    for (let i = 0; i < of; i++) row.append(el("span", { class: i < count ? "pip on" : "pip" }));
    return row;
  }
  function minutes(seconds) {
    return seconds >= 60 ? Math.round(seconds / 60) + " min" : seconds + " s";
  }
  function card(title, ...body) {
    return el("section", { class: "card" }, el("h3", {}, title), ...body);
  }

  function decryptoBoard(v, ending) {
    const parts = [];
    const keywords = v.keywords || (ending && ending.keywords) || null;
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

  // "John (agent_0)": the name the LLM seats use, beside the id of the record
  function who(v, id) {
    const name = (v.names || {})[id];
    return name && name !== id ? name + " (" + id + ")" : String(id);
  }

  function gossipList(items, v) {
    if (!items.length) return el("p", { class: "muted" }, "none yet");
    return el("ul", { class: "gossip" }, ...items.map((g) =>
      el("li", {}, el("span", { class: "tag tone-" + g.tone }, g.tone), " ",
        el("span", { class: "who" }, "round " + g.round + ", " + who(v, g.author) + ": "), g.message || "")));
  }

  function gossipBoard(v) {
    const parts = [];
    parts.push(el("section", { class: "card scores" },
      el("div", { class: "score" }, el("span", { class: "label" }, "Round"), el("span", { class: "big" }, v.round + " / " + v.rounds)),
      el("div", { class: "score" }, el("span", { class: "label" }, "You are"), el("span", { class: "big" }, v.role || "sitting out")),
      el("div", { class: "score" }, el("span", { class: "label" }, "Your " + v.stock_name), el("span", { class: "big" }, v.resources === null ? "?" : String(v.resources))),
      el("div", { class: "score" }, el("span", { class: "label" }, (v.counterpart ? who(v, v.counterpart) : "—") + "'s " + v.stock_name), el("span", { class: "big" }, v.counterpart_resources === null ? "?" : String(v.counterpart_resources)))));
    const received = Object.entries(v.received || {});
    if (received.length) {
      parts.push(card(who(v, v.counterpart) + " did to you this round",
        el("p", {}, received.map(([k, x]) => k + ": " + x).join(", "))));
    }
    parts.push(card("Gossip about " + who(v, v.counterpart), gossipList(v.about_counterpart, v)));
    if (v.told) parts.push(card("You were told the tones about " + who(v, v.counterpart), el("p", {}, v.told.join(", ") || "none")));
    parts.push(card("Gossip about you", gossipList(v.about_me, v)));
    return [parts.splice(0, 1), parts];
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
    if (view) {
      const game = state.game === "decrypto" ? "Decrypto" : view.title;
      $("heading").textContent = game + " · you are " + (state.game === "decrypto" ? "the " + view.title : who(view, seat));
    }
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
      status.className = "card status over" + (finished ? (e.won || (e.rank === 1) ? " won" : " lost") : "");
      const lines = [el("strong", {}, "Game over. "), e.outcome + " "];
      if (!finished) lines.push("Nobody wins it.");
      else if (e.game === "decrypto") lines.push(e.won ? "Your side wins." : "Your side loses.");
      else lines.push("You finish " + e.rank + " of " + e.players + " with " + e.final + ".");
      status.replaceChildren(...lines);
      if (!finished && view) {
        const [top, rest] = state.game === "decrypto" ? decryptoBoard(view) : gossipBoard(view);
        $("top").replaceChildren(...top);
        board.replaceChildren(...rest);
      } else if (e.game !== "decrypto" && view) {
        // the last view with the stocks after the last round, as the ranking counts them
        const stocks = e.stocks || {};
        const final = Object.assign({}, view, { resources: stocks[seat] ?? view.resources,
          counterpart_resources: stocks[view.counterpart] ?? view.counterpart_resources });
        const [top, rest] = gossipBoard(final);
        $("top").replaceChildren(...top);
        board.replaceChildren(...rest);
      } else if (e.game === "decrypto" && view) {
        // the last view, now with the keywords revealed and the final reveal and tokens
        const final = Object.assign({}, view, { keywords: e.keywords, last_turn: e.last_turn,
          miscommunications: e.miscommunications, interceptions: e.interceptions, code: null, hints: null,
          turn: e.turns, hint_history: view.hint_history.map((h) => h.slice()) });
        if (e.last_turn && view.turn === e.last_turn.turn) {
          const code = e.last_turn.code.split("-").map(Number);
          code.forEach((d, j) => final.hint_history[d - 1].push(e.last_turn.hints[j]));
        }
        const [top, rest] = decryptoBoard(final);
        $("top").replaceChildren(...top);
        board.replaceChildren(...rest);
      }
      $("rules").open = false;
      $("action").hidden = true;
      showTranscript();
      return;
    }
    if (view) {
      showRules(view);
      const [top, rest] = state.game === "decrypto" ? decryptoBoard(view) : gossipBoard(view);
      $("top").replaceChildren(...top);
      board.replaceChildren(...rest);
    }
    if (state.status === "your_turn") {
      status.className = "card status turn";
      const text = el("span", {}, state.request.title);
      if (state.idle_timeout) {
        text.append(el("span", { class: "muted", id: "idle" }, " · the game ends if you make no move within " + minutes(state.idle_timeout)));
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
