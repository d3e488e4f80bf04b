# SPDX-License-Identifier: GPL-2.0-only
"""The results layer: what turns one fio run into the sweep's documents
(result.json and progress.txt of a run, the bandwidth-log summary, meta.json,
the plots' data; a fleet's per-host runs), as pure functions of the files'
text."""
