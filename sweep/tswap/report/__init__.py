# SPDX-License-Identifier: GPL-2.0-only
"""The report layer: the text of each output of one host's run
(best-aio.json, summary.csv, report.md, compare.md, the summary on
stdout, the run's verdict), and a fleet's (report.md, the summary,
progress lines, summary.csv), from the documents on disk, as pure functions."""
