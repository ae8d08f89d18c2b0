// Package chtest starts a real ClickHouse server for tests: the installed
// binary, on free loopback ports, with a temporary data directory that is
// removed when the server stops. Under CI (CI=true) a missing binary is a
// failure, not a skip.
package chtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
)

// ErrNoBinary is returned by Start when no ClickHouse server is installed.
var ErrNoBinary = errors.New("no clickhouse server binary found (install the clickhouse-server package: make deps)")

// Server is a running ClickHouse server owned by a test binary.
type Server struct {
	Addr string // native protocol host:port
	// HTTPAddr is the host:port of the HTTP interface (it changes when a
	// paused server resumes).
	HTTPAddr string
	dir      string
	binary   []string
	proc
	tcpPort int
	// httpPort, when set, is the HTTP port the next launch takes (a
	// cluster's servers have theirs chosen with the others'); otherwise
	// launch picks one.
	httpPort int
	dbSeq    atomic.Int64
	extra    string // configuration of a cluster's server (StartCluster), inside <yandex>
}

// findBinary returns the command that runs a ClickHouse server: the
// clickhouse-server of Debian's package, or the single clickhouse binary of
// current releases. EDGE_TEST_CLICKHOUSE=off hides it, to see which tests
// run without ClickHouse (outside CI they are skipped, not failed).
func findBinary() ([]string, error) {
	if os.Getenv("EDGE_TEST_CLICKHOUSE") == "off" {
		return nil, ErrNoBinary
	}
	for _, name := range []string{"clickhouse-server", "/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"} {
		if p, err := exec.LookPath(name); err == nil {
			return []string{p}, nil
		}
	}
	if p, err := exec.LookPath("clickhouse"); err == nil {
		return []string{p, "server"}, nil
	}
	return nil, ErrNoBinary
}

// Start starts a server and waits until it answers. Call Stop when done.
func Start() (*Server, error) {
	bin, err := findBinary()
	if err != nil {
		return nil, err
	}
	s, err := newServer(bin)
	if err != nil {
		return nil, err
	}
	dir := s.dir
	if s.tcpPort, err = freePort(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.tcpPort))
	if err := s.launch(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// newServer returns a server of binary bin with a data folder of its own,
// not started.
func newServer(bin []string) (*Server, error) {
	dir, err := os.MkdirTemp("", "edge-clickhouse-*")
	if err != nil {
		return nil, fmt.Errorf("make data dir: %w", err)
	}
	return &Server{dir: dir, binary: bin}, nil
}

// launch writes the configuration and runs the server until it answers.
func (s *Server) launch() error {
	httpPort := s.httpPort
	s.httpPort = 0
	if httpPort == 0 {
		var err error
		if httpPort, err = freePort(); err != nil {
			return err
		}
	}
	s.HTTPAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort))
	if err := s.writeConfig(); err != nil {
		return err
	}
	args := append(append([]string{}, s.binary[1:]...), "--config-file="+filepath.Join(s.dir, "config.xml"))
	if err := s.start(s.dir, "server.log", s.binary[0], args...); err != nil {
		return err
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := analytics.Open(ctx, s.Config("default"))
		cancel()
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-s.exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			return fmt.Errorf("clickhouse exited at start: %s", tail(log, 2000))
		default:
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("clickhouse did not answer within 60s: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Config returns the settings to reach database db on this server.
func (s *Server) Config(db string) analytics.Config {
	cfg := analytics.DefaultConfig()
	cfg.Addr = s.Addr
	cfg.Database = db
	return cfg
}

// writeConfig writes the server's configuration file (a running server
// reads what it may change of it again on its own).
func (s *Server) writeConfig() error {
	_, port, _ := net.SplitHostPort(s.HTTPAddr)
	httpPort, _ := strconv.Atoi(port)
	cfg := ConfigXML(s.dir, s.tcpPort, httpPort)
	if s.extra != "" { // a cluster's server
		cfg = strings.Replace(cfg, "</yandex>", s.extra+"</yandex>", 1)
		cfg = strings.Replace(cfg, "<profiles><default>", "<profiles><default>"+analytics.RequiredProfile, 1)
		if os.Getenv("EDGE_TEST_CH_DEBUG") != "" {
			cfg = strings.Replace(cfg, "<level>warning</level>", "<level>debug</level>", 1)
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "config.xml"), []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}

// Pause stops the server process (as an outage would) while keeping its
// data; Resume starts it again on the same port with the same data.
func (s *Server) Pause() { s.kill() }

// Resume starts a paused server again and waits until it answers.
func (s *Server) Resume() error { return s.launch() }

// proc is a process a test owns: a server, or ZooKeeper, in a process
// group of its own, its output in a log file of its folder.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// start runs name with args in dir, its output in dir/log.
func (p *proc) start(dir, log, name string, args ...string) error {
	logFile, err := os.Create(filepath.Join(dir, log))
	if err != nil {
		return fmt.Errorf("create log: %w", err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	waited, err := StartChild(cmd)
	if err != nil {
		logFile.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	p.cmd, p.exited = cmd, make(chan struct{})
	go func() {
		if err := <-waited; err != nil {
			fmt.Fprintf(logFile, "\n[%s ended: %v]\n", name, err) // what killed it, for died's callers
		}
		logFile.Close()
		close(p.exited)
	}()
	return nil
}

// StartChild starts cmd in a process group of its own, killed with the
// test process should that die without cleaning up, and returns the
// channel that gets cmd.Wait's error when it ends.
//
// Linux sends the parent-death signal when the thread that started the
// child ends, not the process (golang/go#27505), and the Go runtime ends
// a thread whose goroutine locked it and returned (package lowprio's
// do), which would kill a server while a test still uses it. So the
// child is started and waited for by a goroutine that locks its thread
// for the child's whole life.
func StartChild(cmd *exec.Cmd) (<-chan error, error) {
	cmd.SysProcAttr = procAttr()
	started, waited := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends after the child
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		waited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return waited, nil
}

// died reports whether the process ended without being killed (a crash,
// or the kernel's OOM killer).
func (p *proc) died() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// kill kills the process and its children and waits for it to end.
func (p *proc) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
	p.cmd = nil
}

// Stop kills the server and removes its data directory.
func (s *Server) Stop() {
	s.kill()
	os.RemoveAll(s.dir)
}

// NewDatabase returns the settings of a fresh, uniquely named database on
// the server (created by analytics.Migrate, or by the caller). The database
// is dropped when the test ends.
func (s *Server) NewDatabase(t testing.TB) analytics.Config {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbSeq.Add(1))
	cfg := s.Config(name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if conn, err := analytics.Open(ctx, s.Config("default")); err == nil {
			conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name)
			conn.Close()
		}
	})
	return cfg
}

// Migrated returns a fresh database with the schema applied and an open
// connection to it, closed when the test ends.
func (s *Server) Migrated(t testing.TB) (analytics.Config, driver.Conn) {
	t.Helper()
	cfg := s.NewDatabase(t)
	ctx := context.Background()
	if _, err := analytics.Migrate(ctx, cfg, discardLogger()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return cfg, conn
}

// Main starts a server for the test binary, runs the tests with it, and
// stops it. Without a server binary the tests that need one are skipped,
// except under CI, where that is a failure. Use it from TestMain:
//
//	var srv *chtest.Server
//	func TestMain(m *testing.M) { chtest.Main(m, &srv) }
func Main(m *testing.M, srv **Server) {
	s, err := Start()
	switch {
	case err == nil:
		*srv = s
	case errors.Is(err, ErrNoBinary) && os.Getenv("CI") != "true":
		fmt.Fprintln(os.Stderr, "chtest:", err, "- tests that need ClickHouse will skip")
	default:
		fmt.Fprintln(os.Stderr, "chtest: cannot start ClickHouse:", err)
		os.Exit(1)
	}
	code := m.Run()
	if s != nil {
		if s.died() {
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			fmt.Fprintf(os.Stderr, "chtest: the ClickHouse server ended on its own during the tests; its log ends:\n%s\n", tail(log, 4000))
		}
		s.Stop()
	}
	os.Exit(code)
}

// Need skips the test when no server could be started (outside CI only:
// under CI, Main already failed).
func Need(t testing.TB, srv *Server) *Server {
	t.Helper()
	if srv == nil {
		t.Skip("no ClickHouse server installed")
	}
	return srv
}

func freePort() (int, error) {
	var p portSet
	defer p.close()
	return p.take()
}

// portSet hands out loopback ports that stay distinct: each is held open
// until released, so the kernel cannot hand it out twice meanwhile. (Ports
// taken one after the other and closed at once can repeat: a cluster was
// once configured with two replicas on one port.)
type portSet struct{ held map[int]net.Listener }

// take returns a free port, held until released.
func (p *portSet) take() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	if p.held == nil {
		p.held = make(map[int]net.Listener)
	}
	port := l.Addr().(*net.TCPAddr).Port
	p.held[port] = l
	return port, nil
}

// release frees ports for the server about to listen on them.
func (p *portSet) release(ports ...int) {
	for _, port := range ports {
		if l, ok := p.held[port]; ok {
			l.Close()
			delete(p.held, port)
		}
	}
}

// close releases every port still held.
func (p *portSet) close() {
	for port := range p.held {
		p.release(port)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Log returns the end of the server's log (its console: warnings and
// errors), for a test's failure message.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	return tail(b, 4000)
}

// SaveLog copies the server's whole log to dir, named by its port, and
// returns the copy's path. With EDGE_TEST_CH_DEBUG set, a cluster's
// servers log every query.
func (s *Server) SaveLog(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("clickhouse-%d.log", s.tcpPort))
	return path, os.WriteFile(path, b, 0o644)
}
