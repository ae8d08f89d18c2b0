package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// event is a mark on the plot.
type event struct {
	at   time.Time
	text string
}

func readEvents(name string) []event {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	var out []event
	for _, line := range strings.Split(string(b), "\n") {
		secs, text, ok := strings.Cut(strings.TrimSpace(line), " ")
		if n, err := strconv.ParseInt(secs, 10, 64); ok && err == nil {
			out = append(out, event{time.Unix(n, 0), text})
		}
	}
	return out
}

// row is one window's figures.
type row struct {
	t          float64 // minutes since start
	rps        float64
	non2xx     map[string]int
	p50, p99   time.Duration // every answer
	cachedP99  time.Duration // cached answers and 304s
	rssMiB     float64
	byKindRate map[string]float64
}

func (s *soak) rows() []row {
	start := s.windows[0].start
	var out []row
	for i, w := range s.windows {
		end := time.Now()
		if i+1 < len(s.windows) {
			end = s.windows[i+1].start
		}
		secs := end.Sub(w.start).Seconds()
		if secs <= 0 || len(w.samples) == 0 {
			continue
		}
		r := row{t: w.start.Sub(start).Minutes(), non2xx: map[string]int{}, rssMiB: w.rssMiB, byKindRate: map[string]float64{}}
		var all, cached []time.Duration
		for _, x := range w.samples {
			if x.outcome == "not sent" {
				r.non2xx["not sent"]++
				continue
			}
			all = append(all, x.took)
			r.byKindRate[x.kind] += 1 / secs
			if x.kind == "cached" || x.kind == "304" {
				cached = append(cached, x.took)
			}
			if x.outcome != "200" && x.outcome != "304" {
				r.non2xx[x.outcome]++
			}
		}
		slices.Sort(all)
		slices.Sort(cached)
		r.rps = float64(len(all)) / secs
		r.p50, r.p99, r.cachedP99 = pct(all, 0.5), pct(all, 0.99), pct(cached, 0.99)
		out = append(out, r)
	}
	return out
}

func (s *soak) write(csvName, svgName, summaryName, eventsName string) error {
	rows := s.rows()
	if len(rows) == 0 {
		return fmt.Errorf("no answers")
	}
	events := readEvents(eventsName)
	start := s.windows[0].start
	outcomes := map[string]bool{}
	for _, r := range rows {
		for o := range r.non2xx {
			outcomes[o] = true
		}
	}
	names := make([]string, 0, len(outcomes))
	for o := range outcomes {
		names = append(names, o)
	}
	sort.Strings(names)
	// CSV
	f, err := os.Create(csvName)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "minute,answers_per_s,p50_ms,p99_ms,cached_p99_ms,rss_mib")
	for _, o := range names {
		fmt.Fprintf(w, ",%s", strings.ReplaceAll(o, " ", "_"))
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "%.2f,%.0f,%.2f,%.2f,%.2f,%.0f", r.t, r.rps, ms(r.p50), ms(r.p99), ms(r.cachedP99), r.rssMiB)
		for _, o := range names {
			fmt.Fprintf(w, ",%d", r.non2xx[o])
		}
		fmt.Fprintln(w)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	f.Close()
	// Summary: totals by kind and outcome, latency by kind, RSS.
	sf, err := os.Create(summaryName)
	if err != nil {
		return err
	}
	defer sf.Close()
	byKind := map[string]map[string]int{}
	lat := map[string][]time.Duration{}
	for _, win := range s.windows {
		for _, x := range win.samples {
			if byKind[x.kind] == nil {
				byKind[x.kind] = map[string]int{}
			}
			byKind[x.kind][x.outcome]++
			if x.outcome != "not sent" {
				lat[x.kind] = append(lat[x.kind], x.took)
			}
		}
	}
	fmt.Fprintf(sf, "soak: %s, %s to %s\n", time.Since(start).Round(time.Second), start.UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339))
	for _, k := range kinds {
		d := lat[k.name]
		slices.Sort(d)
		var parts []string
		total := 0
		for o, n := range byKind[k.name] {
			parts = append(parts, fmt.Sprintf("%s %d", o, n))
			if o != "not sent" {
				total += n
			}
		}
		sort.Strings(parts)
		fmt.Fprintf(sf, "%-8s %8d answers  p50 %7.2f ms  p99 %7.2f ms  max %8.2f ms  (%s)\n", k.name, total,
			ms(pct(d, 0.5)), ms(pct(d, 0.99)), ms(pct(d, 1)), strings.Join(parts, ", "))
	}
	var rss []float64
	for _, r := range rows {
		if r.rssMiB > 0 {
			rss = append(rss, r.rssMiB)
		}
	}
	if len(rss) > 0 {
		fmt.Fprintf(sf, "RSS of the serving edge: min %.0f MiB, median %.0f MiB, max %.0f MiB (sampled every %v)\n",
			slices.Min(rss), median(rss), slices.Max(rss), s.width)
	}
	keys := make([]string, 0, len(s.firstFn))
	for k := range s.firstFn {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(sf, "first %s: %s\n", k, s.firstFn[k])
	}
	for _, e := range events {
		fmt.Fprintf(sf, "event at %.1f min: %s\n", e.at.Sub(start).Minutes(), e.text)
	}
	return writeSVG(svgName, rows, events, start)
}

func median(v []float64) float64 {
	c := slices.Clone(v)
	slices.Sort(c)
	return c[len(c)/2]
}

// writeSVG draws three panels over the run's minutes: answers a second
// with non-2xx a window, p50 and p99 (every answer, and cached ones), and
// RSS; events as vertical lines.
func writeSVG(name string, rows []row, events []event, start time.Time) error {
	const W, panelH, left, right, gap = 960.0, 180.0, 70.0, 20.0, 40.0
	H := 3*(panelH+gap) + 30
	maxT := rows[len(rows)-1].t + 0.2
	x := func(t float64) float64 { return left + (W-left-right)*t/maxT }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", W, H)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	type series struct {
		label string
		color string
		v     func(r row) float64
	}
	panel := func(i int, title, unit string, ss []series) {
		top := 20 + float64(i)*(panelH+gap)
		maxV := 0.0
		for _, s := range ss {
			for _, r := range rows {
				maxV = max(maxV, s.v(r))
			}
		}
		if maxV == 0 {
			maxV = 1
		}
		maxV *= 1.1
		y := func(v float64) float64 { return top + panelH - panelH*v/maxV }
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-weight="bold">%s</text>`+"\n", left, top-6, title)
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", left, top, W-left-right, panelH)
		for _, f := range []float64{0, 0.5, 1} {
			v := maxV / 1.1 * f
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end">%.4g %s</text>`+"\n", left-4, y(v)+4, v, unit)
		}
		for _, e := range events {
			t := e.at.Sub(start).Minutes()
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#c80" stroke-dasharray="3,3"/>`+"\n", x(t), top, x(t), top+panelH)
			if i == 0 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" fill="#c80" font-size="9" transform="rotate(-90 %.1f %.0f)">%s</text>`+"\n", x(t)+3, top+panelH-4, x(t)+3, top+panelH-4, e.text)
			}
		}
		for j, s := range ss {
			var pts []string
			for _, r := range rows {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(r.t), y(s.v(r))))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", s.color, strings.Join(pts, " "))
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="%s">%s</text>`+"\n", W-right-200, top+14+float64(j)*13, s.color, s.label)
		}
	}
	non2xx := func(r row) float64 {
		n := 0
		for o, c := range r.non2xx {
			if o != "not sent" {
				n += c
			}
		}
		return float64(n)
	}
	panel(0, "answers a second, and non-2xx answers a window", "", []series{
		{"answers/s", "#1f77b4", func(r row) float64 { return r.rps }},
		{"non-2xx in the window", "#d62728", non2xx},
	})
	panel(1, "latency", "ms", []series{
		{"p99, every answer", "#d62728", func(r row) float64 { return ms(r.p99) }},
		{"p99, cached and 304", "#2ca02c", func(r row) float64 { return ms(r.cachedP99) }},
		{"p50, every answer", "#1f77b4", func(r row) float64 { return ms(r.p50) }},
	})
	panel(2, "RSS of the serving edge", "MiB", []series{
		{"RSS", "#9467bd", func(r row) float64 { return r.rssMiB }},
	})
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">minutes since the start (%.0f min)</text>`+"\n", left, H-8, maxT)
	b.WriteString("</svg>\n")
	return os.WriteFile(name, []byte(b.String()), 0o644)
}
