package chtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
)

// ErrNoZooKeeper is returned by StartCluster when ZooKeeper (Debian's
// zookeeper package) is not installed.
var ErrNoZooKeeper = errors.New("no ZooKeeper found (install Debian's zookeeper package: make deps)")

// ClusterName is the name of the test cluster in every server's
// <remote_servers>.
const ClusterName = "edge"

// ZooKeeper is a standalone ZooKeeper server on a loopback port, with its
// data in a temporary folder.
type ZooKeeper struct {
	Port int
	dir  string
	proc
}

// zooKeeperClassPath returns the class path of Debian's zookeeper
// package: its jars and their dependencies in /usr/share/java.
func zooKeeperClassPath() (string, error) {
	if os.Getenv("EDGE_TEST_CLICKHOUSE") == "off" {
		return "", ErrNoZooKeeper
	}
	if _, err := os.Stat("/usr/share/java/zookeeper.jar"); err != nil {
		return "", ErrNoZooKeeper
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "", ErrNoZooKeeper
	}
	return "/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/*", nil
}

// NeedZooKeeper starts a standalone ZooKeeper for one test, stopped when
// it ends. Without ZooKeeper installed the test skips, except under CI
// (CI=true), where it fails.
func NeedZooKeeper(t testing.TB) *ZooKeeper {
	t.Helper()
	z, err := StartZooKeeper()
	switch {
	case err == nil:
		t.Cleanup(func() {
			if z.died() {
				// Not the test's doing (Pause kills it knowingly): say
				// so, or the test fails for a reason its log hides.
				log, _ := os.ReadFile(filepath.Join(z.dir, "zookeeper.log"))
				t.Errorf("ZooKeeper ended by itself during the test: %s", tail(log, 2000))
			}
			z.Stop()
		})
		return z
	case errors.Is(err, ErrNoZooKeeper) && os.Getenv("CI") != "true":
		t.Skip(err)
	}
	t.Fatal(err)
	return nil
}

// StartZooKeeper starts a standalone ZooKeeper and waits until it
// answers.
func StartZooKeeper() (*ZooKeeper, error) {
	cp, err := zooKeeperClassPath()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "edge-zookeeper-*")
	if err != nil {
		return nil, fmt.Errorf("make zookeeper dir: %w", err)
	}
	z := &ZooKeeper{dir: dir}
	if z.Port, err = freePort(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := z.launch(cp); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return z, nil
}

func (z *ZooKeeper) launch(cp string) error {
	cfg := fmt.Sprintf("tickTime=500\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n4lw.commands.whitelist=ruok\n",
		filepath.Join(z.dir, "data"), z.Port)
	cfgPath := filepath.Join(z.dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("write zoo.cfg: %w", err)
	}
	// A small heap: the tests keep a few hundred nodes.
	if err := z.start(z.dir, "zookeeper.log", "java", "-Xmx256m", "-XX:+UseSerialGC", "-cp", cp, "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgPath); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for !z.answers() {
		select {
		case <-z.exited:
			log, _ := os.ReadFile(filepath.Join(z.dir, "zookeeper.log"))
			return fmt.Errorf("zookeeper exited at start: %s", tail(log, 2000))
		default:
		}
		if time.Now().After(deadline) {
			z.kill()
			return errors.New("zookeeper did not answer within 60s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// answers reports whether ZooKeeper answers "imok" to "ruok".
func (z *ZooKeeper) answers() bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(z.Port)), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("ruok")); err != nil {
		return false
	}
	buf := make([]byte, 4)
	n, _ := c.Read(buf)
	return string(buf[:n]) == "imok"
}

// Pause stops ZooKeeper, keeping its data; Resume starts it again on the
// same port.
func (z *ZooKeeper) Pause() { z.kill() }

// Resume starts a paused ZooKeeper again and waits until it answers.
func (z *ZooKeeper) Resume() error {
	cp, err := zooKeeperClassPath()
	if err != nil {
		return err
	}
	return z.launch(cp)
}

// Stop kills ZooKeeper and removes its data.
func (z *ZooKeeper) Stop() {
	z.kill()
	os.RemoveAll(z.dir)
}

// Cluster is a ZooKeeper and ClickHouse servers on loopback forming the
// cluster ClusterName: Shards[i] are the replicas of shard i+1.
type Cluster struct {
	ZooKeeper *ZooKeeper
	Shards    [][]*Server
}

// StartCluster starts ZooKeeper and a cluster of len(replicas) shards,
// shard i with replicas[i] servers, each server with the cluster, its
// macros and ZooKeeper in its configuration. Call Stop when done.
func StartCluster(replicas ...int) (*Cluster, error) {
	bin, err := findBinary()
	if err != nil {
		return nil, err
	}
	zk, err := StartZooKeeper()
	if err != nil {
		return nil, err
	}
	c := &Cluster{ZooKeeper: zk}
	// Every server's ports first, all held until their server starts: each
	// configuration names all servers, and no two may share a port.
	var ports portSet
	defer ports.close()
	interserver := make(map[*Server]int)
	for _, n := range replicas {
		var shard []*Server
		for range n {
			s, err := newServer(bin)
			if err != nil {
				c.Stop()
				return nil, err
			}
			shard = append(shard, s)
			var ps [3]int
			for k := range ps {
				if ps[k], err = ports.take(); err != nil {
					c.Shards = append(c.Shards, shard)
					c.Stop()
					return nil, err
				}
			}
			s.tcpPort, s.httpPort, interserver[s] = ps[0], ps[1], ps[2]
			s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.tcpPort))
		}
		c.Shards = append(c.Shards, shard)
	}
	remote := c.remoteServers()
	for i, shard := range c.Shards {
		for j, s := range shard {
			s.extra = serverExtra(zk.Port, remote, i+1, j+1, interserver[s])
			ports.release(s.tcpPort, s.httpPort, interserver[s])
			if err := s.launch(); err != nil {
				c.Stop()
				return nil, fmt.Errorf("shard %d replica %d: %w", i+1, j+1, err)
			}
		}
	}
	return c, nil
}

// AddReplica starts a new server as a replica of shard (counted from
// 0), with none of the cluster's databases, and names it in every
// server's <remote_servers>: the running ones read their configuration
// again on their own within seconds (ClickHouse reloads clusters), and
// their distributed DDL then waits for it too. analytics.Migrate with the
// cluster gives it the tables it lacks.
func (c *Cluster) AddReplica(shard int) (*Server, error) {
	bin, err := findBinary()
	if err != nil {
		return nil, err
	}
	s, err := newServer(bin)
	if err != nil {
		return nil, err
	}
	var ports portSet
	defer ports.close()
	var ps [3]int
	for k := range ps {
		if ps[k], err = ports.take(); err != nil {
			os.RemoveAll(s.dir)
			return nil, err
		}
	}
	s.tcpPort, s.httpPort = ps[0], ps[1]
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.tcpPort))
	c.Shards[shard] = append(c.Shards[shard], s)
	remote := c.remoteServers()
	for _, other := range c.Servers() {
		if other == s {
			continue
		}
		other.extra = remoteServersRE.ReplaceAllLiteralString(other.extra, "<remote_servers>"+remote+"</remote_servers>")
		if err := other.writeConfig(); err != nil {
			return nil, err
		}
	}
	s.extra = serverExtra(c.ZooKeeper.Port, remote, shard+1, len(c.Shards[shard]), ps[2])
	ports.release(ps[:]...)
	if err := s.launch(); err != nil {
		return nil, fmt.Errorf("shard %d's new replica: %w", shard+1, err)
	}
	return s, nil
}

// remoteServersRE finds a server's <remote_servers>.
var remoteServersRE = regexp.MustCompile(`<remote_servers>.*</remote_servers>`)

// serverExtra is the configuration a cluster's server adds to ConfigXML's.
func serverExtra(zkPort int, remote string, shard, replica, interserver int) string {
	return fmt.Sprintf(`  <zookeeper><node><host>127.0.0.1</host><port>%d</port></node><session_timeout_ms>10000</session_timeout_ms></zookeeper>
  <remote_servers>%s</remote_servers>
  <macros><shard>%d</shard><replica>r%d</replica></macros>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <interserver_http_port>%d</interserver_http_port>
  <distributed_ddl><path>/clickhouse/edge/task_queue/ddl</path></distributed_ddl>
  <merge_tree><zookeeper_session_expiration_check_period>1</zookeeper_session_expiration_check_period></merge_tree>
`, zkPort, remote, shard, replica, interserver)
}

// remoteServers returns the <remote_servers> body naming the cluster.
func (c *Cluster) remoteServers() string {
	var b strings.Builder
	b.WriteString("<" + ClusterName + ">")
	for _, shard := range c.Shards {
		b.WriteString("<shard><internal_replication>true</internal_replication>")
		for _, s := range shard {
			fmt.Fprintf(&b, "<replica><host>127.0.0.1</host><port>%d</port></replica>", s.tcpPort)
		}
		b.WriteString("</shard>")
	}
	b.WriteString("</" + ClusterName + ">")
	return b.String()
}

// Servers returns every server, shard by shard.
func (c *Cluster) Servers() []*Server {
	var out []*Server
	for _, shard := range c.Shards {
		out = append(out, shard...)
	}
	return out
}

// Config returns the settings to reach database db on the cluster
// through every server, the first preferred.
func (c *Cluster) Config(db string) analytics.Config {
	cfg := analytics.DefaultConfig()
	var addrs []string
	for _, s := range c.Servers() {
		addrs = append(addrs, s.Addr)
	}
	cfg.Addr, cfg.Database, cfg.Cluster = strings.Join(addrs, ","), db, ClusterName
	return cfg
}

// Stop stops every server and ZooKeeper and removes their data.
func (c *Cluster) Stop() {
	for _, s := range c.Servers() {
		s.Stop()
	}
	if c.ZooKeeper != nil {
		c.ZooKeeper.Stop()
	}
}

// Migrated returns the settings of a fresh database on the cluster with
// the schema applied (analytics.Migrate with the cluster), dropped on
// every server when the test ends.
func (c *Cluster) Migrated(ctx context.Context, name string) (analytics.Config, func(), error) {
	cfg := c.Config(name)
	if _, err := analytics.Migrate(ctx, cfg, discardLogger()); err != nil {
		return cfg, nil, fmt.Errorf("migrate on the cluster: %w", err)
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		root := c.Config("default")
		root.Cluster = ""
		if conn, err := analytics.Open(ctx, root); err == nil {
			conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" ON CLUSTER "+ClusterName)
			conn.Close()
		}
	}
	return cfg, drop, nil
}
