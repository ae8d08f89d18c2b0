package v1

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/served"
)

// Permissions is how many live listings of the stores whose manifests
// are read (chrome, edge) ask for each permission, most asked first.
type Permissions struct {
	Permissions []figures.PermissionCount `json:"permissions"`
}

// PermissionsRead is the read of the permissions' counts (GET
// /api/v1/permissions, the permissions' page and their files).
func PermissionsRead() *read.Read[NoParams, Permissions] { return permissionsRead }

var permissionsRead = &read.Read[NoParams, Permissions]{
	Cheap:    true,
	Route:    "/api/v1/permissions",
	NotReady: "The permissions' counts are",
	Page:     answer.SamePage,
	Parse:    func(*fiber.Ctx, *served.State, read.Needs) (NoParams, error) { return NoParams{}, nil },
	Key:      func(k answer.Key, _ *NoParams) answer.Key { return k },
	Run: func(_ *fiber.Ctx, st *served.State, _ *NoParams, _ read.Needs) (*Permissions, error) {
		return &Permissions{Permissions: st.Figures.Permissions()}, nil
	},
}

// permissionsJSON writes the permissions' counts.
var permissionsJSON = jsonOf(func(v *Permissions) any { return v })

// PermissionsFiles are the permissions' counts as CSV (permission,
// listings) and NDJSON, every permission.
func PermissionsFiles() []read.Codec[Permissions] {
	return files(read.Needs{}, func(*Permissions) string { return "permissions" }, []string{"permission", "listings"},
		func(v *Permissions, add func([]string)) {
			for _, p := range v.Permissions {
				add([]string{csvw.Text(p.Permission), strconv.Itoa(p.Count)})
			}
		},
		func(v *Permissions, add func(any)) {
			for i := range v.Permissions {
				add(&v.Permissions[i])
			}
		})
}
