"use strict";
// A gossip game's seat page (donation, prisoner's dilemma, trust, market): the round, the
// seat's role and stocks, what the counterpart did, and the gossip about the counterpart and
// about the seat. The view is what socialsim.agents.human.gossip.view built.
(function () {
  function gossipList(items, v) {
    if (!items.length) return el("p", { class: "muted" }, "none yet");
    return el("ul", { class: "gossip" }, ...items.map((g) =>
      el("li", {}, el("span", { class: "tag tone-" + g.tone }, g.tone), " ",
        el("span", { class: "who" }, "round " + g.round + ", " + who(v, g.author) + ": "), g.message || "")));
  }

  function board(v) {
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

  // the last view with the stocks after the last round, as the ranking counts them
  function final(view, e, seat) {
    const stocks = e.stocks || {};
    return Object.assign({}, view, { resources: stocks[seat] ?? view.resources,
      counterpart_resources: stocks[view.counterpart] ?? view.counterpart_resources });
  }

  registerBoard("gossip", {
    heading: (v, seat) => v.title + " · you are " + who(v, seat),
    board,
    final,
    won: (e) => e.rank === 1,
    verdict: (e) => "You finish " + e.rank + " of " + e.players + " with " + e.final + ".",
  });
})();
