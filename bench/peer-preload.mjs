// Preloaded into the peer gateway's process (node --import). Its Node server listens on a port
// without naming a host, so on every interface: every listen without a host binds 127.0.0.1
// instead. And the process ends when the benchmark that started it goes away.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenOnLoopback(...args) {
  if (typeof args[0] === "number" && typeof args[1] !== "string") {
    args.splice(1, args[1] === undefined ? 1 : 0, "127.0.0.1");
  } else if (args[0] !== null && typeof args[0] === "object" && args[0].port !== undefined && !args[0].host) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};

if (process.send) process.once("disconnect", () => process.exit(0));
