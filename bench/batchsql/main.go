// Command batchsql replays group-commit batch statements captured by
// sqlcapture (bench/batchsql/batches.py LOG N extracts one of N orders) and
// variants of them, each with fresh order numbers, keys and event ids, on
// one connection, rotating the variants each round, and reports the CPU per
// order of the server thread serving that connection (its TID from
// information_schema.PROCESSLIST, /proc/PID/task/TID/stat: other clients of
// a shared server do not count), of the whole mariadbd, and wall time.
// batchsql -dsn "root@tcp(127.0.0.1:3306)/DB?multiStatements=true" -pid PID -orders N NAME=FILE …
// DB must hold the schema and the SKU the batches name (serve --demo made it).
package main

import (
	"crypto/rand"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

var (
	snRe  = regexp.MustCompile(`'(\d{26})'`)
	keyRe = regexp.MustCompile(`'c[a-z]+-\d+-\d+'`)
	uuRe  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

func uuid() string {
	var b [16]byte
	rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

var ctr = (time.Now().Unix() % 1000000) * 1000000

// fresh gives the template new order numbers, keys and event ids.
func fresh(t string) string {
	m := map[string]string{}
	t = snRe.ReplaceAllStringFunc(t, func(s string) string {
		if v, ok := m[s]; ok {
			return v
		}
		ctr++
		v := fmt.Sprintf("'%s%012d'", time.Now().UTC().Format("20060102150405"), ctr)
		m[s] = v
		return v
	})
	t = keyRe.ReplaceAllStringFunc(t, func(s string) string { ctr++; return "'k-" + strconv.FormatInt(ctr, 10) + "'" })
	t = uuRe.ReplaceAllStringFunc(t, func(string) string { return uuid() })
	return t
}

func ticks(pid string) int64 {
	b, _ := os.ReadFile("/proc/" + pid + "/stat")
	f := strings.Fields(string(b))
	u, _ := strconv.ParseInt(f[13], 10, 64)
	s, _ := strconv.ParseInt(f[14], 10, 64)
	return u + s
}

func run(db *sql.DB, q string) error {
	rs, err := db.Query(q)
	if err != nil {
		return err
	}
	defer rs.Close()
	for {
		for rs.Next() {
		}
		if !rs.NextResultSet() {
			break
		}
	}
	return rs.Err()
}

func main() {
	dsn := flag.String("dsn", "", "")
	pid := flag.String("pid", "", "mariadbd pid")
	n := flag.Int("n", 400, "batches per variant per round")
	rounds := flag.Int("rounds", 5, "")
	orders := flag.Int("orders", 24, "orders per template batch")
	flag.Parse()
	db, err := sql.Open("mysql", *dsn)
	if err != nil {
		panic(err)
	}
	db.SetMaxOpenConns(1)
	type variant struct {
		name string
		text string
	}
	var vs []variant
	for _, a := range flag.Args() {
		name, file, _ := strings.Cut(a, "=")
		b, err := os.ReadFile(file)
		if err != nil {
			panic(err)
		}
		vs = append(vs, variant{name, strings.TrimSpace(string(b))})
	}
	for _, v := range vs {
		if err := run(db, fresh(v.text)); err != nil {
			fmt.Println(v.name, "ERR", err)
			os.Exit(1)
		}
	}
	var tid string
	if err := db.QueryRow("SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()").Scan(&tid); err != nil {
		panic(err)
	}
	task := *pid + "/task/" + tid
	cpu := map[string][]float64{}
	thr := map[string][]float64{}
	wall := map[string][]float64{}
	for r := 0; r < *rounds; r++ {
		for i := range vs {
			v := vs[(i+r)%len(vs)]
			texts := make([]string, *n)
			for k := range texts {
				texts[k] = fresh(v.text)
			}
			t0, c0, h0 := time.Now(), ticks(*pid), ticks(task)
			for _, q := range texts {
				if err := run(db, q); err != nil {
					panic(err)
				}
			}
			c1, h1, el := ticks(*pid), ticks(task), time.Since(t0)
			thr[v.name] = append(thr[v.name], float64(h1-h0)*10000/float64(*n**orders))
			cpu[v.name] = append(cpu[v.name], float64(c1-c0)*10000/float64(*n**orders))
			wall[v.name] = append(wall[v.name], float64(el.Microseconds())/float64(*n**orders))
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load %s", load)
	for _, v := range vs {
		c, h, w := cpu[v.name], thr[v.name], wall[v.name]
		fmt.Printf("%-10s bytes/order %5.0f  connection thread us/order %6.1f %v  mariadbd %6.1f  wall %6.1f\n", v.name,
			float64(len(v.text))/float64(*orders), med(h), round(h), med(c), med(w))
	}
}

func med(x []float64) float64 {
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	return y[len(y)/2]
}
func round(x []float64) []string {
	var s []string
	for _, v := range x {
		s = append(s, strconv.FormatFloat(v, 'f', 0, 64))
	}
	return s
}
