# SMC-R suite, guest b: the peer agent serves guest a's tests until they ask it to exit (or a ends).
set -uo pipefail
. test/vm/smcr/jobs/pair-lib.sh
node test/vm/smcr/peer-agent.cjs
