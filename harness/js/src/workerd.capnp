# workerd's configuration for the cloudflare-codemode arm: the agent's Worker (worker.js, the esbuild bundle of
# worker.mjs) with a Worker Loader binding for Code Mode's Dynamic Workers (an experimental feature: workerd runs with
# --experimental), listening on loopback (the launcher names the port with --socket-addr), and a network service
# that lets it reach the run's endpoints on 127.0.0.1 ("local").
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "agent", worker = .agent),
    (name = "network", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "agent")],
);

const agent :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2026-11-01",  # nodejs_compat is on by default from 2026-08-04
  bindings = [(name = "LOADER", workerLoader = (id = "codemode"))],
  globalOutbound = "network",
);
