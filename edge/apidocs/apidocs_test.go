package apidocs

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestRedocIsThePinnedRelease: the embedded script is the published file
// of the pinned release, byte for byte (assets/README.md).
func TestRedocIsThePinnedRelease(t *testing.T) {
	sum := sha256.Sum256(redocJS)
	if got := hex.EncodeToString(sum[:]); got != redocSHA256 {
		t.Fatalf("assets/redoc.standalone-%s.js has SHA-256 %s, want %s", RedocVersion, got, redocSHA256)
	}
}
