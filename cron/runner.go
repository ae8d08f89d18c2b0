package cron

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	robfig "github.com/robfig/cron/v3"
)

// Job is one background job.
type Job struct {
	Name     string                          // short name, used in logs, /readyz and metrics
	Schedule string                          // standard 5-field cron spec, in UTC
	Run      func(ctx context.Context) error // one attempt; must honour ctx
	// OnlyIf, when set, is asked before each run: false skips the run
	// (counted as Skipped). A fleet's once-jobs run only on the edge that
	// leads (package leader).
	OnlyIf func() bool
	// Quiet logs the job's successful runs at debug level: a job that
	// runs every few seconds and mostly finds nothing to do.
	Quiet bool
	// OnLead runs the job at once when this edge comes to lead its fleet
	// (Runner.RunOnLead): a fleet's once-jobs do not wait for their next
	// schedule on a new leader.
	OnLead bool
}

// Status is what is known about a job's runs.
type Status struct {
	Name        string        `json:"name"`
	Schedule    string        `json:"schedule"`
	Runs        int           `json:"runs"`              // successful runs
	Failures    int           `json:"failures"`          // failed attempts
	Skipped     int           `json:"skipped,omitempty"` // runs skipped: another edge of the fleet leads
	LastSuccess time.Time     `json:"lastSuccess,omitzero"`
	LastError   string        `json:"lastError,omitempty"`
	LastErrorAt time.Time     `json:"lastErrorAt,omitzero"`
	Duration    time.Duration `json:"durationNs"` // of the last successful run
	Running     bool          `json:"running"`
}

// Backoff bounds the waits between failed attempts.
type Backoff struct {
	Initial, Max time.Duration
}

// Runner owns the jobs and their schedule.
type Runner struct {
	log     *slog.Logger
	backoff Backoff
	cron    *robfig.Cron
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu     sync.Mutex
	status map[string]*Status
	jobs   []*entry
}

type entry struct {
	Job
	running sync.Mutex // a job's runs never overlap
}

// New returns a runner whose jobs' contexts derive from ctx.
func New(ctx context.Context, log *slog.Logger, backoff Backoff) *Runner {
	if backoff.Initial <= 0 {
		backoff.Initial = time.Second
	}
	if backoff.Max < backoff.Initial {
		backoff.Max = time.Minute
	}
	ctx, cancel := context.WithCancel(ctx)
	cl := robfig.PrintfLogger(slog.NewLogLogger(log.Handler(), slog.LevelWarn))
	return &Runner{
		log:     log,
		backoff: backoff,
		cron: robfig.New(robfig.WithLocation(time.UTC),
			robfig.WithChain(robfig.Recover(cl), robfig.SkipIfStillRunning(cl))),
		ctx:    ctx,
		cancel: cancel,
		status: map[string]*Status{},
	}
}

// Add registers a job. It must be called before Start.
func (r *Runner) Add(j Job) error {
	if _, err := robfig.ParseStandard(j.Schedule); err != nil {
		return fmt.Errorf("job %s: schedule %q: %w", j.Name, j.Schedule, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.status[j.Name]; dup {
		return fmt.Errorf("job %s added twice", j.Name)
	}
	r.status[j.Name] = &Status{Name: j.Name, Schedule: j.Schedule}
	r.jobs = append(r.jobs, &entry{Job: j})
	return nil
}

// Start runs every job once now, in the background, and then on schedule.
func (r *Runner) Start() {
	r.mu.Lock()
	jobs := slices.Clone(r.jobs)
	r.mu.Unlock()
	for _, e := range jobs {
		r.cron.AddFunc(e.Schedule, func() {
			r.wg.Add(1)
			defer r.wg.Done()
			r.run(e)
		})
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.run(e)
		}()
	}
	r.cron.Start()
}

// ErrNoJob says RunNow was asked for a job this runner does not have
// (one whose schedule is off on this edge).
var ErrNoJob = errors.New("no job named")

// RunNow makes one attempt of the named job, after any run in progress
// has finished, and returns its error. Failures are recorded in the job's
// status like those of scheduled runs, but not retried.
func (r *Runner) RunNow(name string) error {
	r.mu.Lock()
	var found *entry
	for _, e := range r.jobs {
		if e.Name == name {
			found = e
		}
	}
	r.mu.Unlock()
	if found == nil {
		return fmt.Errorf("%w: %s", ErrNoJob, name)
	}
	found.running.Lock()
	defer found.running.Unlock()
	return r.once(found)
}

// RunOnLead runs every job marked OnLead now, one after another (each
// after any run of it in progress), and returns their errors, each
// naming its job.
func (r *Runner) RunOnLead() []error {
	r.mu.Lock()
	var lead []*entry
	for _, e := range r.jobs {
		if e.OnLead {
			lead = append(lead, e)
		}
	}
	r.mu.Unlock()
	var errs []error
	for _, e := range lead {
		e.running.Lock()
		if err := r.once(e); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Name, err))
		}
		e.running.Unlock()
	}
	return errs
}

// once makes one attempt and records its outcome.
func (r *Runner) once(e *entry) error {
	if e.OnlyIf != nil && !e.OnlyIf() {
		r.update(e.Name, func(s *Status) { s.Skipped++ })
		return nil
	}
	r.update(e.Name, func(s *Status) { s.Running = true })
	start := time.Now()
	err := r.attempt(e.Job)
	took := time.Since(start)
	if err == nil {
		r.update(e.Name, func(s *Status) {
			s.Running, s.Runs, s.LastSuccess, s.Duration = false, s.Runs+1, time.Now().UTC(), took
		})
		level := slog.LevelInfo
		if e.Quiet {
			level = slog.LevelDebug
		}
		r.log.Log(context.Background(), level, "job done", "job", e.Name, "duration", took.Round(time.Millisecond))
		return nil
	}
	r.update(e.Name, func(s *Status) {
		s.Running, s.Failures, s.LastError, s.LastErrorAt = false, s.Failures+1, err.Error(), time.Now().UTC()
	})
	return err
}

// run attempts the job until it succeeds or the runner stops, waiting
// longer after each failure. It returns at once if the job is running.
func (r *Runner) run(e *entry) {
	if !e.running.TryLock() {
		return
	}
	defer e.running.Unlock()
	backoff := r.backoff.Initial
	for attempt := 1; r.ctx.Err() == nil; attempt++ {
		err := r.once(e)
		if err == nil || r.ctx.Err() != nil {
			return
		}
		r.log.Warn("job failed; will retry", "job", e.Name, "attempt", attempt, "retry_in", backoff, "err", err)
		select {
		case <-time.After(backoff):
		case <-r.ctx.Done():
			return
		}
		backoff = min(backoff*2, r.backoff.Max)
	}
}

func (r *Runner) attempt(j Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("job %s panicked: %v", j.Name, p)
		}
	}()
	return j.Run(r.ctx)
}

func (r *Runner) update(name string, f func(*Status)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r.status[name])
}

// Status returns a copy of every job's status, in the order they were added.
func (r *Runner) Status() []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Status, 0, len(r.jobs))
	for _, e := range r.jobs {
		out = append(out, *r.status[e.Name])
	}
	return out
}

// Stop stops scheduling, cancels running jobs' contexts and waits for them.
func (r *Runner) Stop() {
	<-r.cron.Stop().Done()
	r.cancel()
	r.wg.Wait()
}
