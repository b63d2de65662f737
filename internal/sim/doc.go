// Package sim is a seeded simulation of Herald's send core: the real
// delivery workers (fan-out, send, retry chunks, finish, webhooks, consent
// notices and events, the daily re-confirmation run) and each node's real
// schedule watch, on the real embedded store, driven through hours of
// simulated time by one seed that decides the order of every step, every
// fault and every answer of FCM. Run(t, seed, …) runs one seed and
// checks the invariants; TestSim runs many (HERALD_SIM_SEEDS, default 30;
// TestSimPostgres on PostgreSQL when HERALD_TEST_DATABASE_URL is set) and
// a failing seed prints the command that replays it (HERALD_SIM_SEED=n).
//
// What is real: delivery.Service (one per node, all on one store), its
// workers as River would run them (delivery.Service.Unit), its schedule
// watch (StartScheduleWatch), the SQLite store with every query and
// transaction, herald's domain rules. What is simulated:
//
//   - River: the store inserts its jobs through a Queue of this package,
//     in the store's own transactions, into a table beside the store's
//     (sim_job), so a job exists exactly when the write that made it
//     committed. The scheduler plays River's producer (a node with room
//     fetches one of the due jobs, chosen from the seed), its completer
//     (done, snoozed, cancelled, retried at the worker's NextRetry or
//     attempt⁴ seconds, discarded after its attempts), its storeRetry
//     middleware (an unavailable store snoozes the job a second), its
//     job timeout (the run's context), its rescuer (a job running for
//     RescueAfter is made retryable, whether or not its node lives) and
//     its periodic daily job (inserted every hour).
//   - Time: the run lives in a testing/synctest bubble, so time.Now,
//     timers and tickers — delivery's Config.Now, the store's Now,
//     River's clock in job arguments, the watch's ticker, waits for a
//     scheduled second, the pacer — all read the bubble's clock, which
//     moves only when every goroutine is blocked. Each seed starts at
//     another hour of 2000-01-01 and runs past every morning, retry hour
//     and webhook retry its work needs (20 h after the last operation).
//     When nothing is due for more than 5 s the watches' looks are held
//     and the clock jumps (a quiet stretch), so a day costs a few hundred
//     steps rather than 43,200 looks per node.
//   - FCM: each node is its own herald.AppSender. Authorize and Deliver
//     answer from the seed as the FCM client classifies FCM's answers:
//     success, UNREGISTERED, INVALID_ARGUMENT (a token, or the payload),
//     429 with and without Retry-After, 500, 503, 401 (the push fails),
//     THIRD_PARTY_AUTH_ERROR, the token endpoint unreachable or refusing.
//     A granted Deliver reached FCM, whatever befalls its node after.
//   - Webhooks: each node is its own delivery.WebhookSender; the
//     receiver answers 503 or success from the seed.
//   - Faults: at any store call a node may die (before the call, or after
//     it applied), or the call fail (herald.ErrUnavailable or another
//     error) before it or after it applied, its answer lost; a send may
//     reach FCM and its node die before it is recorded. A dead node's
//     calls all fail at once without effect, its jobs stay running in the
//     queue as a crash leaves them, and it comes back as a new node (new
//     service, new watch) up to 3 minutes later. At most 3 deaths a run;
//     no fault after 30 minutes past the last operation, so the run
//     settles. A job runs twice (River's at-least-once) when its completion
//     meets a fault or its node's death after its work was done (the job
//     stays running and the rescuer frees it), and when the rescuer frees
//     a job a live node still runs (for RescueAfter).
//   - The workload: API requests and SDK calls at times from the seed,
//     each on a live node: pushes of every kind made by herald.NewPush
//     and accepted by delivery.Service.Accept (users, messages, topic,
//     all, token; immediate and scheduled, half of the scheduled ones in
//     each device's local time; marketing with night policy skip or
//     defer) to devices that report zones from UTC+14 to UTC-11 or none,
//     cancels (CancelScheduled, including a deferred
//     part) and moves (EditScheduled) of pushes, registrations, reinstalls
//     (a token on a new device id), token refreshes, hand-overs, consent
//     changes, withdrawals, and SDK events (herald.PlanEvents, then
//     RecordEvents) through the store as the API calls it.
//
// Scheduling points: every call of delivery.Store (Store wraps each,
// store_gen.go), every Authorize and Deliver, every webhook post, every
// workload operation, and each job's completion. A goroutine reaching one
// registers and waits; once synctest.Wait says every goroutine of the
// bubble is blocked, the scheduler grants one of the waiting calls, or
// has a node fetch a job, chosen by the seed among them sorted by actor
// and call (not by arrival). So only one step runs at a time, and a store
// call runs whole between two points.
//
// What replays: the workload, the fault rates and the node count are
// drawn from the seed before the run and always replay. The steps are
// drawn by the scheduler alone, among waiting calls sorted by actor and
// call (push ids by their order of acceptance, as ids have a random
// part), and synctest's clock moves only when every goroutine waits, so
// a run is a function of its seed: the step trace (Options.Trace; its
// hash logged with -v) is equal on every replay, which TestSimReplays
// checks. Two things made about one replay in three diverge before: the
// backoff jitter of retries came from math/rand (delivery's Config.Jitter
// now takes the seed's), and a watch's concurrent runs waited under one
// actor's name, so equal keys were ordered by their arrival (each run now
// carries its work as a pprof label, which names its actor). What only
// explores: database/sql's pools and SQLite's locks are real (not
// simulated), and on PostgreSQL (TestSimPostgres) its driver's goroutines
// and the server's lock waits make a run explore rather than replay.
//
// The invariants (check.go), checked after each run, and as each send is
// made: every push has ended (done, failed or cancelled) — none left
// sending or scheduled; a send goes only to a token its run marked in
// flight, whose device held it at that marking as planned and, for a push
// naming its users, was still the recipient's; an ad only with marketing
// consent, and in the night window of the device's own zone only with
// night consent; a local-time push's device not before its zone's time
// unless that time had passed at accept; no token had
// a push twice unless a delivery of it is recorded resent; every delivery
// counted sent reached FCM; the counts add up (tokens = sent + failed +
// suppressed + deferred) and received ≤ sent, opened ≤ received; an event
// counts only for a device sent the push; a users or messages push is
// charged HalfPerUser per requested user, a topic or all-users push per
// user found (night-deferred pushes, whose refunds depend on a cancel,
// are left out); webhooks named exactly the unreachable users of each
// ended push, each delivered at least once; at most one re-confirmation
// notice per user per local day.
package sim
