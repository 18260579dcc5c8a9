package cli

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// startLive shows a status line computed by f, redrawn every 100 ms, when
// stdout is a terminal. stopLiveLine removes it.
func (o *output) startLive(f func() string) {
	if !o.tty || o.json {
		return
	}
	o.mu.Lock()
	o.liveFunc = f
	o.stopLive, o.liveDone = make(chan struct{}), make(chan struct{})
	o.mu.Unlock()
	go func() {
		defer close(o.liveDone)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-o.stopLive:
				return
			case <-t.C:
				o.mu.Lock()
				o.clearLive()
				o.drawLive()
				o.mu.Unlock()
			}
		}
	}()
}

// stopLiveLine stops the live line started by startLive and erases it.
func (o *output) stopLiveLine() {
	o.mu.Lock()
	stop := o.stopLive
	o.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-o.liveDone
	o.mu.Lock()
	o.clearLive()
	o.liveFunc, o.stopLive = nil, nil
	o.mu.Unlock()
}

// clearLive erases the live line; callers hold o.mu.
func (o *output) clearLive() {
	if o.live != "" {
		fmt.Fprint(o.w, "\r\x1b[K")
		o.live = ""
	}
}

// drawLive draws the live line; callers hold o.mu.
func (o *output) drawLive() {
	if o.liveFunc == nil {
		return
	}
	s := o.liveFunc()
	if s == "" {
		return
	}
	s = fitWidth(s, termWidth()-1)
	fmt.Fprint(o.w, s)
	o.live = s
}

// termWidth is the terminal width from $COLUMNS, else 80.
func termWidth() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("COLUMNS"), &n); err == nil && n > 20 {
		return n
	}
	return 80
}

// fitWidth cuts s (which may hold colour codes) to n visible characters.
func fitWidth(s string, n int) string {
	var b strings.Builder
	visible := 0
	inEsc := false
	for _, r := range s {
		switch {
		case r == '\x1b':
			inEsc = true
		case inEsc:
			if r == 'm' {
				inEsc = false
			}
		default:
			if visible >= n {
				b.WriteString(cReset)
				return b.String()
			}
			visible++
		}
		b.WriteRune(r)
	}
	return b.String()
}

// spinner is the frames of the live line's spinner.
var spinner = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// liveAfter is how long a stream runs before the live line appears.
var liveAfter = 300 * time.Millisecond
