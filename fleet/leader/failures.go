package leader

import "time"

// failLogEvery is how often a run of failures to take part in the
// election is said again at ERROR after its first.
const failLogEvery = time.Minute

// failures counts the tries in a row that failed to take part in the
// election (run's goroutine only), so that a lasting failure is logged at
// ERROR when it starts and then once a minute, not at every retry.
type failures struct {
	count  int       // the failed tries since the last success
	logged time.Time // when the last was logged, zero when none
	since  int       // the failed tries since that line
}

// failed records a failed try and logs it when it is the first of a run
// or a minute passed since the last line.
func (f *failures) failed(e *Elector, err error) {
	f.count++
	f.since++
	if !f.logged.IsZero() && time.Since(f.logged) < failLogEvery {
		return
	}
	e.log.Error("fleet election: this edge cannot take part; it leads no once-jobs and follows no leader until this is mended",
		"path", e.cfg.Path, "err", err, "failed_tries", f.count, "since_last_said", f.since)
	f.logged, f.since = time.Now(), 0
}

// mended records a try that took part, saying so when tries had failed.
func (f *failures) mended(e *Elector) {
	if f.count > 0 {
		e.log.Info("fleet election: this edge takes part again", "path", e.cfg.Path, "failed_tries", f.count)
	}
	*f = failures{}
}
