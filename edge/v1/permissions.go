package v1

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/served"
)

// permissionsWindow is the span, in days, over which the permissions'
// counts say how they moved.
const permissionsWindow = 30

// Permissions is how many live listings of the stores whose manifests
// are read (chrome, edge) ask for each permission, most asked first,
// and how each count moved over the 30 days to the data's newest day
// (ChangeFrom to ChangeTo, both as the ranks job counted them: null until
// it has counted both days). ChangeMissing says the counts could not be
// read in the read budget: the answer then has no change and is not kept.
type Permissions struct {
	Permissions   []PermissionCount `json:"permissions"`
	ChangeFrom    string            `json:"changeFrom"`
	ChangeTo      string            `json:"changeTo"`
	ChangeMissing bool              `json:"changeMissing"`
	// Ranking says the ranks job was counting days on this edge: a day's
	// counts may be incomplete, and the answer is not kept.
	Ranking bool `json:"ranking"`
}

// PermissionCount is a permission, how many live listings ask for it,
// and the change of the ranks job's daily count of them over the window
// (null when either day is not counted).
type PermissionCount struct {
	Permission string `json:"permission"`
	Count      int    `json:"count"`
	Change30d  *int   `json:"change30d"`
}

// PermissionsRead is the read of the permissions' counts (GET
// /api/v1/permissions, the permissions' page and their files): the
// counts from the published figures, their change from ClickHouse under
// the read budget (so not Cheap).
func (s *API) PermissionsRead() *read.Read[NoParams, Permissions] { return s.permissions }

func (s *API) newPermissionsRead() *read.Read[NoParams, Permissions] {
	return &read.Read[NoParams, Permissions]{
		Route:    "/api/v1/permissions",
		NotReady: "The permissions' counts are",
		Page:     answer.SamePage,
		Parse:    func(*fiber.Ctx, *served.State, read.Needs) (NoParams, error) { return NoParams{}, nil },
		Key:      func(k answer.Key, _ *NoParams) answer.Key { return k },
		Run:      s.runPermissions,
	}
}

// runPermissions gathers the counts and their change.
func (s *API) runPermissions(c *fiber.Ctx, st *served.State, _ *NoParams, _ read.Needs) (*Permissions, error) {
	to := views.DayOf(st.Replica.Info().ReadingsMark)
	from := to - permissionsWindow
	out := &Permissions{ChangeFrom: from.String(), ChangeTo: to.String(), Ranking: s.ranking()}
	days, err := s.permChange.get(c.UserContext(), to, out.Ranking, func(ctx context.Context) ([2]map[string]int, error) {
		ctx, cancel := context.WithTimeout(ctx, s.cfg.ReadBudget)
		defer cancel()
		return analytics.Read(ctx, s.db, func(ctx context.Context, conn driver.Conn) ([2]map[string]int, error) {
			then, err := analytics.LoadPermissionCounts(ctx, conn, from)
			if err != nil {
				return [2]map[string]int{}, err
			}
			now, err := analytics.LoadPermissionCounts(ctx, conn, to)
			return [2]map[string]int{then, now}, err
		})
	})
	if err != nil {
		s.log.Warn("read-through failed", "what", "the permissions' change", "err", err)
		out.ChangeMissing = true
	}
	counted := len(days[0]) > 0 && len(days[1]) > 0
	for _, p := range st.Figures.Permissions() {
		row := PermissionCount{Permission: p.Permission, Count: p.Count}
		if counted {
			d := days[1][p.Permission] - days[0][p.Permission]
			row.Change30d = &d
		}
		out.Permissions = append(out.Permissions, row)
	}
	if out.Permissions == nil {
		out.Permissions = []PermissionCount{}
	}
	return out, nil
}

// permChangeTTL is how long the permissions' daily counts read from
// ClickHouse serve every ask, and permChangeRetry how long a failed read
// is answered from before it is tried again: the route is read from
// ClickHouse a few times an hour whatever its traffic.
const (
	permChangeTTL   = 5 * time.Minute
	permChangeRetry = 30 * time.Second
)

// permChangeMemo keeps the permissions' daily counts of the window
// ending on one day, as last read, so that reads of the permissions share
// one ClickHouse read (one at a time).
type permChangeMemo struct {
	mu      sync.Mutex
	to      views.Day
	at      time.Time
	days    [2]map[string]int
	err     error
	ranking bool // read while the ranks job ran
}

// get returns the counts of the window ending on to: those kept when they
// are of that day and fresh (permChangeTTL, or permChangeRetry after a
// failure or when read while the ranks job ran), else those load reads
// (ranking: the ranks job runs now).
func (m *permChangeMemo) get(ctx context.Context, to views.Day, ranking bool, load func(context.Context) ([2]map[string]int, error)) ([2]map[string]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ttl := permChangeTTL
	if m.err != nil || m.ranking {
		ttl = permChangeRetry
	}
	if !m.at.IsZero() && m.to == to && time.Since(m.at) < ttl {
		return m.days, m.err
	}
	m.days, m.err = load(ctx)
	m.to, m.at, m.ranking = to, time.Now(), ranking
	return m.days, m.err
}

// Transient reports whether v lacks the counts' change: its answers are
// not kept.
func (v *Permissions) Transient() bool { return v.ChangeMissing || v.Ranking }

// permissionsJSON writes the permissions' counts; an answer without
// their change is not kept (it is asked again).
var permissionsJSON = transientFiles([]read.Codec[Permissions]{jsonOf(func(v *Permissions) any { return v })})[0]

// PermissionsFiles are the permissions' counts as CSV (permission,
// listings, change_30d) and NDJSON, every permission.
func PermissionsFiles() []read.Codec[Permissions] {
	cs := files(read.Needs{}, func(*Permissions) string { return "permissions" }, []string{"permission", "listings", "change_30d"},
		func(v *Permissions, add func([]string)) {
			for _, p := range v.Permissions {
				change := ""
				if p.Change30d != nil {
					change = strconv.Itoa(*p.Change30d)
				}
				add([]string{csvw.Text(p.Permission), strconv.Itoa(p.Count), change})
			}
		},
		func(v *Permissions, add func(any)) {
			for i := range v.Permissions {
				add(&v.Permissions[i])
			}
		})
	return transientFiles(cs)
}
