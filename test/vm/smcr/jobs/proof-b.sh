# SMC-R proof, guest b (server side); see proof-a.sh for the other half and ../boot-pair.sh for the harness.
# Starts the echo server under the launcher; the server creates b-ready once it listens, serves guest a's
# one connection and exits 0 only if that connection was SMC-R. Waits for a-done so a broken client
# cannot leave the server (and this guest) running until the harness's timeout.
set -euo pipefail
. test/vm/smcr/jobs/pair-lib.sh
PORT=${SMC_RUN_PROOF_PORT:-7070}
pair_step "echo server under smc-run on 0.0.0.0:$PORT"
node bin/smc-run node test/vm/smcr/jobs/proof-echo.cjs server "$PORT" "$SMC_RUN_VM_RUN/b-ready" &
srv=$!
rc=0
pair_wait a-done 300 || rc=1
if [ $rc != 0 ]; then kill "$srv" 2>/dev/null || true; fi
wait "$srv" || rc=1
pair_step "server rc=$rc"
exit $rc
