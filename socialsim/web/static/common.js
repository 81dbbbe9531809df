"use strict";
// Everything a person typed reaches the page through el()'s text nodes: never as HTML.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
function fragment() {
  return new URLSearchParams(location.hash.slice(1));
}
async function api(method, path, token, body) {
  const response = await fetch(path, {
    method,
    headers: { "Authorization": "Bearer " + token, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = {};
  try { data = await response.json(); } catch (e) { /* empty body */ }
  return { status: response.status, data };
}

// The seat pages' pieces, shared by every game's board (served as /boards.js, each game's
// from its view module): a game registers {heading, board, final, won, verdict} by its name.
const BOARDS = {};
function registerBoard(name, board) {
  BOARDS[name] = board;
}
function card(title, ...body) {
  return el("section", { class: "card" }, el("h3", {}, title), ...body);
}
function pips(count, of, kind) {
  const row = el("span", { class: "pips " + kind, title: count + " of " + of });
  for (let i = 0; i < of; i++) row.append(el("span", { class: i < count ? "pip on" : "pip" }));
  return row;
}
// "John (agent_0)": the name the LLM seats use, beside the id of the record
function who(v, id) {
  const name = (v.names || {})[id];
  return name && name !== id ? name + " (" + id + ")" : String(id);
}
