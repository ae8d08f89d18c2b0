package render

// permissionWords say in a reader's words what the permissions most
// extensions ask for let them do (Chrome's and Edge's names); others are
// shown by their name alone.
var permissionWords = map[string]string{
	"<all_urls>":            "read and change every site you visit",
	"activeTab":             "act on the tab you are using, when you use it",
	"alarms":                "run on a schedule",
	"bookmarks":             "read and change your bookmarks",
	"browsingData":          "clear your browsing data",
	"clipboardRead":         "read what you copy",
	"clipboardWrite":        "write to your clipboard",
	"contentSettings":       "change sites' settings (cookies, scripts, camera)",
	"contextMenus":          "add to the menu of a right click",
	"cookies":               "read and change cookies",
	"debugger":              "attach the debugger to your tabs: read and change everything in them",
	"declarativeNetRequest": "block or change requests by rules",
	"desktopCapture":        "capture your screen",
	"downloads":             "manage your downloads",
	"geolocation":           "know where you are",
	"history":               "read and change your browsing history",
	"identity":              "sign you in with your account",
	"idle":                  "know when you are away",
	"management":            "manage your other extensions",
	"nativeMessaging":       "talk to programs installed on your computer",
	"notifications":         "show notifications",
	"pageCapture":           "save whole pages",
	"privacy":               "change privacy settings",
	"proxy":                 "route your traffic through a proxy",
	"scripting":             "run scripts in sites",
	"storage":               "keep its own data in the browser",
	"sidePanel":             "show a panel of its own beside the pages",
	"offscreen":             "run a hidden page of its own to use web features in the background",
	"tabCapture":            "capture what a tab shows and plays",
	"tabs":                  "see the addresses and titles of your tabs",
	"topSites":              "see the sites you visit most",
	"unlimitedStorage":      "keep unlimited data in the browser",
	"webNavigation":         "follow where you go in each tab",
	"webRequest":            "see every request your browser makes",
	"webRequestBlocking":    "block or change every request your browser makes",
}

// Permission is a permission as a page shows it: its name and, where it
// is a common one, what it lets the extension do.
type Permission struct {
	Name, Words string
}

// Permissions returns names with their words.
func Permissions(names []string) []Permission {
	out := make([]Permission, len(names))
	for i, n := range names {
		out[i] = Permission{Name: n, Words: permissionWords[n]}
	}
	return out
}

// PermissionWords is what the permission name lets an extension do, in
// words, or "" for one that is not common.
func PermissionWords(name string) string { return permissionWords[name] }
