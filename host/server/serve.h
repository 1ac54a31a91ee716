/*
 * `ksched serve`: a long-running scheduler with a Kubernetes-shaped HTTP
 * API, Prometheus metrics and hot reload of plugins and configuration.
 * Takes (argc, argv) with argv[0] "serve"; returns the exit code (0 after
 * a clean SIGTERM/SIGINT drain, 1 invalid config or plugins, 2 usage).
 * Main thread only.
 */
#ifndef KS_SERVER_SERVE_H
#define KS_SERVER_SERVE_H

int ks_cli_serve(int argc, char **argv);

#endif
