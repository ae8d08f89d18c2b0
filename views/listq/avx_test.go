//go:build goexperiment.simd && amd64 && linux

package listq

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestNoAVX512InTheProject checks that no function of the project in
// this test binary holds an AVX-512 instruction (an EVEX-encoded one:
// its first byte 0x62, which in 64-bit mode is nothing else). The
// kernels run wherever AVX2 does (hasAVX2); one AVX-512 instruction,
// such as the KMOVW of a 16-bit mask's ToBits, is an illegal
// instruction on a processor without it (many virtual machines'), which
// TestScanKernelsMatchScalar finds only on such a processor. This finds
// it on any. It reads the binary with objdump (binutils, which gcc, the
// cgo toolchain, brings).
func TestNoAVX512InTheProject(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// go test strips the binary's symbols: each instruction's function
	// is found by its address in the runtime's own table (the binary is
	// not position-independent, so its addresses are the file's).
	out, err := exec.Command("objdump", "-d", "-w", exe).Output()
	if err != nil {
		t.Fatalf("objdump -d of the test binary (binutils): %v", err)
	}
	evex := map[string]string{}
	ymm := 0 // the project's instructions on 256-bit registers: the kernels are there
	for line := range strings.Lines(string(out)) {
		// "  addr:\tbytes \tinstruction"
		f := strings.Split(line, "\t")
		if len(f) < 3 {
			continue
		}
		evexed, wide := strings.HasPrefix(strings.TrimSpace(f[1]), "62 "), strings.Contains(f[2], "%ymm")
		if !evexed && !wide {
			continue
		}
		addr, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(f[0]), ":"), 16, 64)
		if err != nil {
			continue
		}
		fn := runtime.FuncForPC(uintptr(addr))
		if fn == nil || !strings.HasPrefix(fn.Name(), "github.com/edge-stats/edge/") {
			continue
		}
		if evexed {
			evex[fn.Name()] = strings.TrimSpace(f[2])
		}
		if wide {
			ymm++
		}
	}
	for fn, insn := range evex {
		t.Errorf("%s holds an AVX-512 instruction (%s): use one of AVX2's", fn, insn)
	}
	if ymm == 0 {
		t.Fatal("no instruction of the project on a 256-bit register: the AVX2 kernels are not in the binary (or its addresses are not the file's), so nothing was checked")
	}
}
