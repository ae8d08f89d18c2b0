package main

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"
)

// attackersTokens are the tokens an outside review found the estimate
// alone took: hashes of nothing and of "password", counting, digits of
// pi and e, well-known texts, interleaved alphabets, and weak phrases
// behind an encoding, a prefix, separators, whitespace, an extra digit,
// reversal, a control byte, UTF-16 or characters beyond ASCII; and dense
// l33t input, the estimator's slowest.
func attackersTokens() []string {
	phrase := "our fleet token for production, do not share"
	hexPhrase := hex.EncodeToString([]byte(phrase))
	s256 := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	s1 := func(s string) string { h := sha1.Sum([]byte(s)); return hex.EncodeToString(h[:]) }
	var counting, years, a1b2, azby strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprint(&counting, i)
	}
	for y := 1970; y <= 1986; y++ {
		fmt.Fprint(&years, y)
	}
	for i := range 26 {
		fmt.Fprintf(&a1b2, "%c%d", 'a'+i, (i+1)%10)
		if i < 13 {
			fmt.Fprintf(&azby, "%c%c", 'a'+i, 'z'-i)
		}
	}
	var escaped strings.Builder
	for _, c := range []byte("changeme-changeme-changeme") {
		fmt.Fprintf(&escaped, "%%%02x", c)
	}
	var colons []string
	for i := 0; i < len(hexPhrase); i += 2 {
		colons = append(colons, hexPhrase[i:i+2])
	}
	u16 := utf16.Encode([]rune(phrase))
	b16 := make([]byte, 0, 2*len(u16))
	for _, c := range u16 {
		b16 = append(b16, byte(c), byte(c>>8))
	}
	return []string{
		s256(""), s1(""), s256("password"), s1("password"),
		s256("changeme\n") + "  -", // echo changeme | sha256sum
		s256("changeme\n"),
		"Lorem ipsum dolor sit amet, consectetur adipiscing elit",
		"Loremipsumdolorsitamet,consecteturadipiscingelit",
		"The quick brown fox jumps over the lazy dog",
		"The_quick_brown_fox_jumps_over_the_lazy_dog",
		piDigits[:64], "3." + piDigits[1:64], eDigits[:64],
		counting.String(), years.String(), a1b2.String(), azby.String(), azby.String() + azby.String(),
		base32.StdEncoding.EncodeToString([]byte(phrase)),
		strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte("changeme-changeme-changeme"))),
		escaped.String(),
		"0x" + hexPhrase,
		strings.Join(colons, ":"),
		strings.Join(colons, "-"),
		" " + hexPhrase,
		hexPhrase + "\n",
		hexPhrase + "7",
		reverse(hexPhrase),
		reverse("correct-horse-battery-staple-correct-horse"),
		base64.StdEncoding.EncodeToString([]byte("our fleet token\x01for production")),
		hex.EncodeToString([]byte("our fleet token\x07for production")),
		hex.EncodeToString(b16),
		"correct\u00a0horse\u00a0battery\u00a0staple\u00a0correct\u00a0horse",
		"correct\u200bhorse\u200bbattery\u200bstaple\u200bcorrect\u200bhorse",
		"corre\u0301ct-horse-batte\u0301ry-staple-corre\u0301ct-horse",
		strings.Repeat("p4$$w0rd!P@55W0RD", 30), // dense l33t, past the estimate's window
		strings.Repeat("x", maxTokenLen+1),
	}
}

// TestDenseTokenChecked: the estimator's slowest input (dense l33t
// spellings, as long as a token may be) is refused, and a random token
// behind as long a prefix of it... is refused too, the window read being
// the token's start; a random one of the cap's length is taken.
func TestDenseTokenChecked(t *testing.T) {
	dense := strings.Repeat("4@8(3&6#!1|7+0$5", maxTokenLen/16)
	if err := checkFleetToken(dense); err == nil {
		t.Errorf("dense l33t input %q is taken", dense)
	}
	r := seeded(9)
	b := make([]byte, maxTokenLen/2)
	r.Read(b)
	if tok := hex.EncodeToString(b); checkFleetToken(tok) != nil {
		t.Errorf("a random token of %d hex digits is refused: %v", len(tok), checkFleetToken(tok))
	}
}

// TestGeneratedTokenFormat: a token in the command's format is taken only
// whole: a character changed, lost or added, or a made-up body with its
// checksum computed, is refused.
func TestGeneratedTokenFormat(t *testing.T) {
	made, err := newFleetToken(seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkFleetToken(made); err != nil {
		t.Fatalf("%q: %v", made, err)
	}
	flip := []byte(made)
	flip[10] ^= 1
	weakBody := strings.Repeat("abcdefgh", tokenLength/8)
	for _, tok := range []string{string(flip), made[:len(made)-1], made + "A", tokenPrefix + weakBody + checksum(weakBody),
		tokenPrefix + strings.Repeat("Q", tokenLength) + checksum(strings.Repeat("Q", tokenLength))} {
		if err := checkFleetToken(tok); err == nil {
			t.Errorf("%q is taken as generated", tok)
		}
	}
}

// FuzzCheckFleetToken: the check never panics on any input, and what it
// takes is 40 to 512 characters of printable ASCII (or the generated
// format).
func FuzzCheckFleetToken(f *testing.F) {
	for _, s := range append(attackersTokens(), fleetToken, "", "eft1_", "%zz%", "0x", strings.Repeat("=", 50)) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		if checkFleetToken(tok) != nil {
			return
		}
		if len(tok) < minTokenLen || len(tok) > maxTokenLen {
			t.Fatalf("%q of %d characters is taken", tok, len(tok))
		}
		for i := 0; i < len(tok); i++ {
			if tok[i] < 0x21 || tok[i] > 0x7e {
				t.Fatalf("%q with byte %#x is taken", tok, tok[i])
			}
		}
	})
}
