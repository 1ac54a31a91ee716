/*
 * The conformance runner: run conformance scenarios and compare every
 * scheduling decision with the expected file beside each scenario. The
 * `ksched conformance` subcommand is ks_cli_conformance (cli/cli.h).
 *
 * The pieces, usable on their own (tests use them):
 *   scenario.h  reading NAME.yaml          expected.h  reading NAME.expected.yaml
 *   runner.h    running a scenario         compare.h   comparing the results
 *   conf_result.h  the result records
 */
#ifndef KS_CONFORMANCE_H
#define KS_CONFORMANCE_H

#endif
