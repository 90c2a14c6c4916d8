// Live stock: one GraphQL subscription over WebSocket on /graphql, in the
// graphql-transport-ws protocol (what the npm graphql-ws client speaks),
// written out here because the page loads no packages. The server pushes the
// current state first, then one message per change (docs/live.md).

const PROTOCOL = "graphql-transport-ws";

// subscribe runs one subscription and calls onNext(data) for every message.
// The connection comes back by itself after a drop (1 s, 2 s, … up to 30 s
// apart), and the server's first message then brings the page up to date.
// onError(code, message) reports an error that ends the subscription (such as
// NOT_FOUND for a goods taken off shelf); onState(state) reports "connecting",
// "live" and "offline". Returns a function that ends it.
export function subscribe(query, variables, { token, onNext, onError, onState } = {}) {
  let ws = null;
  let stopped = false;
  let delay = 1000;
  let timer = 0;
  const state = (s) => onState && onState(s);

  const open = () => {
    state("connecting");
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/graphql";
    ws = new WebSocket(url, PROTOCOL);
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: "connection_init", payload: token ? { Authorization: "Bearer " + token } : {} }));
    };
    ws.onmessage = (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch { return; }
      switch (m.type) {
        case "connection_ack":
          ws.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query, variables } }));
          break;
        case "ping":
          ws.send(JSON.stringify({ type: "pong" }));
          break;
        case "next":
          delay = 1000;
          state("live");
          if (m.payload.errors && m.payload.errors.length) {
            const e = m.payload.errors[0];
            stop();
            if (onError) onError((e.extensions && e.extensions.code) || "INTERNAL", e.message);
          } else onNext(m.payload.data);
          break;
        case "error": {
          const e = (m.payload && m.payload[0]) || {};
          stop();
          if (onError) onError((e.extensions && e.extensions.code) || "INTERNAL", e.message || "subscription failed");
          break;
        }
        case "complete":
          stop();
          break;
      }
    };
    ws.onclose = () => {
      if (stopped) return;
      state("offline");
      timer = setTimeout(open, delay);
      delay = Math.min(delay * 2, 30000);
    };
  };

  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    if (ws && ws.readyState <= WebSocket.OPEN) ws.close(1000);
    state("offline");
  };

  open();
  return stop;
}

// selectableFrom answers Goods.selectable from live SKU stock: a value can be
// chosen when an SKU with available stock has it together with every value
// picked in the other dimensions. dimOf maps a value id to its dimension id.
export function selectableFrom(skus, picks, dimOf) {
  const out = new Map();
  const withStock = skus.filter((s) => s.availableStock > 0);
  for (const valueId of dimOf.keys()) {
    const dim = dimOf.get(valueId);
    const others = picks.filter((p) => p.specId !== dim).map((p) => p.valueId);
    out.set(valueId, withStock.some((s) => s.specValueIds.includes(valueId) && others.every((o) => s.specValueIds.includes(o))));
  }
  return out;
}
