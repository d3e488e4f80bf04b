# plan.jq - The plan (plan.tsv text, jq -R -s) as a JSON array of points.
# Used by results.sh plan_json.
[split("\n")[] | select(length > 0) | split("\t")
| {point: .[0], kind: .[1], rw: .[2], backend: .[3], tensor: (.[4] | tonumber),
   block: (.[5] | tonumber), qd: (.[6] | tonumber), submit: .[7], window: .[8],
   threads: (.[9] | tonumber), iodepth: (.[10] | tonumber)}]
