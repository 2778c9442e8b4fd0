# Sums a callgrind output file (scripts/count-host.sh, scripts/count-cuda.sh): prints
# "instructions fake atomics": the instructions less libomp's start-up (ompt_libomp_connect,
# which varies by ~280,000 from run to run), those spent in calls into a fake libcuda.so.1
# (from the call records' inclusive costs), and the atomic (bus-locked) instructions
# (--collect-bus=yes).
function name(kind, v,   id, rest) {  # callgrind name compression: "(id) name", then "(id)"
  if (v !~ /^\(/) return v
  id = substr(v, 2, index(v, ")") - 2); rest = substr(v, index(v, ")") + 2)
  if (rest != "") names[kind, id] = rest
  return names[kind, id]
}
/^ob=/ { ob = name("ob", substr($0, 4)); cob = ob; next }
/^fn=/ { name("fn", substr($0, 4)); cob = ob; next }
/^cob=/ { cob = name("ob", substr($0, 5)); next }
/^cfn=/ { cfn = name("fn", substr($0, 5)); next }
/^calls=/ { call = 1; next }
/^[0-9+*-]/ {
  if (!call) { total += $2; atomics += $3; next }
  call = 0  # the line after calls=: the inclusive cost of those calls
  if (cob ~ /\/libcuda\.so\.1$/ && ob !~ /\/libcuda\.so\.1$/) fake += $2
  if (cfn == "ompt_libomp_connect") libomp += $2
  cob = ob
}
END { printf "%d %d %d\n", total - libomp, fake, atomics }