# cli_expect.cmake - the expectations file (`mtcs run --expect`,
# conformance/expect.h) on a real failing implementation: the mutant
# neg_loses_signed_zero fails exactly neg.masked.f32.signed_zeros,
# neg.masked.f32.special_values and neg.masked.f64.signed_zeros of
# golden/unary.h5 of all its neg cases (its own cases in cli.mutants). Listing those three makes
# the run green (XFAIL); listing a passing case makes it fail (XPASS); a
# different expected status keeps the failure; an expired, malformed,
# duplicated or stale entry is reported with its line.
#   cmake -DMTCS=... -DSRC=... -DBIN=... -P tests/cli_expect.cmake
cmake_minimum_required(VERSION 3.25)
include("${SRC}/tests/lib/expect_run.cmake")
set(M "${BIN}/plugins/mutant_neg_loses_signed_zero.so")
set(G "${SRC}/golden/unary.h5")
set(W "${BIN}/cli_expect.work")
file(REMOVE_RECURSE "${W}")
file(MAKE_DIRECTORY "${W}")
set(ENV{MTCS_TODAY} "2026-11-26")
set(RUN run --backend "${M}" --golden "${G}" --filter "neg.*")

# without expectations: the three failures, exit 1
expect_run(1 "[0-9]+ passed, 3 failed" ${RUN})

# the three known failures: XFAIL, exit 0, the reason shown with -v (a leap
# day and a year's last day are dates)
file(WRITE "${W}/known.txt" "# the neg mutant's known failures
neg.masked.f32.signed_zeros     FAIL  2028-02-29  alice  fast path drops the sign of zero
neg.masked.f32.special_values   FAIL  2027-12-31  alice  the same on inf/nan inputs
neg.masked.f64.signed_zeros     FAIL  2026-11-26  bob    expires today: still valid
")
expect_run(0 "XFAIL  neg.masked.f32.signed_zeros .*FAIL as [^ ]*known.txt:2 expects \\(alice: fast path"
           ${RUN} --expect "${W}/known.txt" -v)
if(NOT last_output MATCHES "--expect: 3 expected failures \\(XFAIL")
  message(SEND_ERROR "the summary does not count 3 XFAIL:\n${last_output}")
endif()

# a passing case listed: XPASS, exit 1, naming the line to remove
file(APPEND "${W}/known.txt" "neg.masked.f32.basic  FAIL  2027-01-31  carol  passes since 0.2\n")
expect_run(1 "XPASS  neg.masked.f32.basic.*known.txt:5 expects FAIL \\(carol: passes since 0.2\\): remove the entry"
           ${RUN} --expect "${W}/known.txt")

# another status than the case yields: the failure stays, noted
file(WRITE "${W}/other.txt" "neg.masked.f32.signed_zeros  CRASH  2027-01-31  alice  used to crash\n")
expect_run(1 "FAIL  neg.masked.f32.signed_zeros.*other.txt:1 expects CRASH, not FAIL" ${RUN}
           --expect "${W}/other.txt")

# bad files: exit 2, the file and line named, nothing run
foreach(bad_case
    "expired|neg.masked.f32.signed_zeros FAIL 2026-11-25 alice old|expired.txt:1: the entry for 'neg.masked.f32.signed_zeros' expired on 2026-11-25"
    "status|# comment\nneg.* PASS 2027-01-31 alice no|status.txt:2: status 'PASS' is not one an entry can expect"
    "date|neg.* FAIL 2027-02-30 alice no|date.txt:1: expiry '2027-02-30' is not a date"
    "date_feb29|neg.* FAIL 2027-02-29 alice no|date_feb29.txt:1: expiry '2027-02-29' is not a date"
    "date_jan32|neg.* FAIL 2027-01-32 alice no|date_jan32.txt:1: expiry '2027-01-32' is not a date"
    "date_apr31|neg.* FAIL 2027-04-31 alice no|date_apr31.txt:1: expiry '2027-04-31' is not a date"
    "date_month13|neg.* FAIL 2027-13-01 alice no|date_month13.txt:1: expiry '2027-13-01' is not a date"
    "reason|neg.* FAIL 2027-01-31 alice|reason.txt:1: no reason"
    "dup|neg.* FAIL 2027-01-31 a x\n\nneg.* FAIL 2027-01-31 b y|dup.txt:3: glob 'neg.\\*' repeats line 1")
  string(REPLACE "|" ";" parts "${bad_case}")
  list(GET parts 0 name)
  list(GET parts 1 text)
  list(GET parts 2 want)
  string(REPLACE "\\n" "\n" text "${text}")
  file(WRITE "${W}/${name}.txt" "${text}\n")
  expect_run(2 "${want}" ${RUN} --expect "${W}/${name}.txt")
  if(last_output MATCHES "passed")
    message(SEND_ERROR "${name}: cases ran despite a bad expectations file")
  endif()
endforeach()
# every month's first day past its end (the table of days per month, entry by
# entry: tests/sweep found August's 32nd accepted; January, February and
# April are above)
foreach(d 2027-03-32 2027-05-32 2027-06-31 2027-07-32 2027-08-32 2027-09-31 2027-10-32
          2027-11-31 2027-12-32)
  file(WRITE "${W}/date_${d}.txt" "neg.* FAIL ${d} alice no\n")
  expect_run(2 "date_${d}.txt:1: expiry '${d}' is not a date" ${RUN} --expect "${W}/date_${d}.txt")
endforeach()
expect_run(2 "--expect ${W}/none.txt: cannot open it" ${RUN} --expect "${W}/none.txt")

# a stale entry (matches no case of the file) fails an otherwise green run
file(READ "${W}/known.txt" known)
string(REPLACE "neg.masked.f32.basic  FAIL" "neg.masked.f32.no_such_case  FAIL" known "${known}")
file(WRITE "${W}/stale.txt" "${known}")
expect_run(1 "stale.txt:5: the entry for 'neg.masked.f32.no_such_case' matches no case" ${RUN}
           --expect "${W}/stale.txt")
