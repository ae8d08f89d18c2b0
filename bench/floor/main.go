// Command floor is the fastest Go HTTP server this benchmark could think
// of, for one question only: how close to nginx can any Go server get on
// this machine when it sends the same bytes? It is not an HTTP server to
// use. It serves the files of one directory, each at /<name>, with fixed
// headers and a weak ETag, answers If-None-Match with a 304, and does
// nothing else: no framework, no router, no limits, no metrics, no
// parsing beyond the request line and one header. It assumes each read
// holds exactly one whole request, as wrk sends them.
//
// On Linux, a body of 16 KB or more leaves as nginx sends a static file: the
// headers marked as followed by more data (MSG_MORE), then sendfile(2)
// from a memfd. A smaller one leaves with its headers in one write.
//
//	go run ./bench/floor --dir www --listen 127.0.0.1:18097
//
// bench/cached.sh starts it when BENCH_FLOOR=1 and measures it beside the
// edge and nginx (bench/README.md, Compression).
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// file is one answer: its headers for a 200 and a 304, and its body.
type file struct {
	ok, notModified []byte
	etag            []byte
	body            []byte
	memfd           int // -1: the body leaves with its headers in one write
	whole           []byte
}

func main() {
	dir := flag.String("dir", ".", "the directory whose files are served")
	listen := flag.String("listen", "127.0.0.1:18097", "the address to listen on (loopback)")
	encoding := flag.String("encoding", "", "the Content-Encoding the files carry, if any")
	flag.Parse()
	files, err := load(*dir, *encoding)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			continue
		}
		go serve(c.(*net.TCPConn), files)
	}
}

// load reads every regular file under dir, keyed by its path from dir.
func load(dir, encoding string) (map[string]*file, error) {
	files := map[string]*file{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(body)
		etag := `W/"` + hex.EncodeToString(sum[:8]) + `"`
		ce := ""
		if encoding != "" {
			ce = "Content-Encoding: " + encoding + "\r\n"
		}
		common := "Content-Type: application/json\r\n" + ce + "Vary: Accept-Encoding\r\nETag: " + etag + "\r\nCache-Control: public, max-age=60\r\n"
		f := &file{
			ok:          fmt.Appendf(nil, "HTTP/1.1 200 OK\r\n%sContent-Length: %d\r\n\r\n", common, len(body)),
			notModified: []byte("HTTP/1.1 304 Not Modified\r\n" + common + "\r\n"),
			etag:        []byte(etag),
			body:        body,
			memfd:       -1,
		}
		f.whole = append(append([]byte{}, f.ok...), body...)
		if len(body) >= 16<<10 {
			if f.memfd, err = newMemfd(body); err != nil {
				return err
			}
		}
		files["/"+filepath.ToSlash(rel)] = f
		return nil
	})
	return files, err
}

// serve answers c's requests until it closes.
func serve(c *net.TCPConn, files map[string]*file) {
	defer c.Close()
	rc, err := c.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 8192)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		req := buf[:n]
		line, _, _ := bytes.Cut(req, []byte("\r\n"))
		fields := strings.Fields(string(line))
		if len(fields) != 3 {
			return
		}
		f := files[fields[1]]
		if f == nil {
			c.Write([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
			continue
		}
		if inm := header(req, "If-None-Match: "); inm != nil && bytes.Equal(inm, f.etag) {
			if _, err := c.Write(f.notModified); err != nil {
				return
			}
			continue
		}
		if f.memfd < 0 {
			if _, err := c.Write(f.whole); err != nil {
				return
			}
			continue
		}
		serr := sendFile(rc, f)
		if serr != nil {
			return
		}
	}
}

// header returns the value of the header whose line starts with name
// (as wrk and curl spell it), or nil.
func header(req []byte, name string) []byte {
	i := bytes.Index(req, []byte("\r\n"+name))
	if i < 0 {
		return nil
	}
	v := req[i+2+len(name):]
	if j := bytes.Index(v, []byte("\r\n")); j >= 0 {
		v = v[:j]
	}
	return v
}
