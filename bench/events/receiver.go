package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The webhook's receiver answers 204 to every POST and counts them; GET
// /count answers the count. In production the receiver is another
// machine's: run here in the benchmark's process (inproc) its HTTP work
// shares the process's scheduler and GC with checkout, in a process of its
// own (proc) only the machine's cores.
func receiverHandler(n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/count" {
			fmt.Fprint(w, n.Load())
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		n.Add(1)
		w.WriteHeader(204)
	})
}

// serveReceiver is -serve-receiver: print the URL, serve until killed.
func serveReceiver(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var n atomic.Int64
	fmt.Printf("http://%s\n", l.Addr())
	_ = http.Serve(l, receiverHandler(&n))
}

// startReceiver starts the receiver -receiver names and returns its URL,
// a count of the requests it answered (-1: unknown) and its stop.
func startReceiver(mode string) (string, func() int64, func(), error) {
	switch mode {
	case "inproc":
		var n atomic.Int64
		s := httptest.NewServer(receiverHandler(&n))
		return s.URL, n.Load, s.Close, nil
	case "proc":
		exe, err := os.Executable()
		if err != nil {
			return "", nil, nil, err
		}
		cmd := exec.Command(exe, "-serve-receiver", "127.0.0.1:0")
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return "", nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return "", nil, nil, err
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			_ = cmd.Process.Kill()
			return "", nil, nil, fmt.Errorf("receiver process: %w", err)
		}
		u := strings.TrimSpace(line)
		recvPID = cmd.Process.Pid
		if receiverNice != 0 {
			// Nice 19: the receiver gets the CPU that checkout and the
			// database leave, as one on another machine costs them none.
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, recvPID, receiverNice); err != nil {
				_ = cmd.Process.Kill()
				return "", nil, nil, fmt.Errorf("receiver process: nice: %w", err)
			}
		}
		stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
		return u, func() int64 { return remoteCount(u) }, stop, nil
	default:
		return mode, func() int64 { return remoteCount(mode) }, func() {}, nil
	}
}

func remoteCount(u string) int64 {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(strings.TrimSuffix(u, "/") + "/count")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}
