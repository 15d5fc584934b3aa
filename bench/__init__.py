"""bench: datasets, runs, judges, summaries, comparisons and reports over pageindex."""

import pageindex  # noqa: F401  (its process settings, onnxruntime's telemetry off, before any PDF library)
