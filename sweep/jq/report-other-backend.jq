# report-other-backend.jq - report.md: a note when another backend beat the
# best libaio point (aggregate.json). Used by report.sh write_report.
.best.aio_source as $b | ([.points[] | select(.backend != "libaio" and .gbs != null)] | max_by(.gbs)) as $o
| if $o and ($o.gbs > ([.points[] | select(.backend == "libaio" and .rw == $o.rw and .gbs != null) | .gbs] | max // 0))
  then "Note: the \($o.backend) backend did better (\($o.gbs * 1000 | round / 1000) GB/s \($o.rw)); DeepSpeed's aio handle uses libaio, so the config above is the best libaio point.\n"
  else empty end
