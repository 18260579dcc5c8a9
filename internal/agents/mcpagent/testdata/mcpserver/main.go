// Command mcpserver is an MCP server made with the official MCP Go SDK,
// for the tests of `parley serve --mcp`: its tools cover each row of the
// mapping (text, image and resources, structured content, isError,
// progress, elicitation, a slow call that can be canceled, a crash, a hang, its environment and process id).
// It speaks MCP over stdio, or with -http ADDR over streamable HTTP at
// /mcp (printing its URL on the first line of standard output).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// canceled counts the slow calls the client canceled.
var canceled atomic.Int64

type textIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type squareIn struct {
	N int `json:"n"`
}

type squareOut struct {
	N      int `json:"n"`
	Square int `json:"square"`
}

type stepsIn struct {
	Steps int `json:"steps"`
}

type none struct{}

type bigIn struct {
	Bytes int    `json:"bytes"`
	Kind  string `json:"kind,omitempty" jsonschema:"text (default) or blob"`
}

type nameIn struct {
	Name string `json:"name"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// png is a 1×1 PNG image.
var png = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "parley-test-mcp", Title: "Parley's test MCP server", Version: "0.1.0"},
		&mcp.ServerOptions{Instructions: "Tools for Parley's tests."})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Title: "Echo", Description: "Echoes the text."},
		func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "An image, an embedded resource and a resource link."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ImageContent{Data: png, MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "some notes"}},
				&mcp.ResourceLink{URI: "https://example.com/report.pdf", Name: "report.pdf", MIMEType: "application/pdf"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "square", Description: "Squares n, with structured content."},
		func(ctx context.Context, req *mcp.CallToolRequest, in squareIn) (*mcp.CallToolResult, squareOut, error) {
			return nil, squareOut{N: in.N, Square: in.N * in.N}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails with isError."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			r := text("it failed on purpose")
			r.IsError = true
			return r, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress steps times, then done."},
		func(ctx context.Context, req *mcp.CallToolRequest, in stepsIn) (*mcp.CallToolResult, any, error) {
			for i := 1; i <= in.Steps; i++ {
				if tok := req.Params.GetProgressToken(); tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok,
						Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)})
				}
				time.Sleep(20 * time.Millisecond)
			}
			return text("done"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "A result of that many bytes: text, or a blob (an embedded resource)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
			if in.Kind == "blob" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: "file:///big.bin", MIMEType: "application/octet-stream", Blob: make([]byte, in.Bytes)}}}}, nil, nil
			}
			return text(strings.Repeat("x", in.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "chatty", Description: "Reports progress steps times without pausing, then done."},
		func(ctx context.Context, req *mcp.CallToolRequest, in stepsIn) (*mcp.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps && tok != nil; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok,
					Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)}); err != nil {
					return nil, nil, err
				}
			}
			return text(fmt.Sprintf("done %d", in.Steps)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks for a name, then greets it."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "What is your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}})
			if err != nil {
				return nil, nil, err
			}
			if r.Action != "accept" {
				return text("no name: " + r.Action), nil, nil
			}
			return text(fmt.Sprintf("hello %v", r.Content["name"])), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "askagain", Description: "Asks for a name, withdraws the question after 100 ms, asks again and greets."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}
			first, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			_, err := req.Session.Elicit(first, &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: schema})
			cancel()
			if err == nil {
				return text("the first question was answered"), nil, nil
			}
			fmt.Fprintln(os.Stderr, "asking again")
			r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name, again?", RequestedSchema: schema})
			if err != nil {
				return nil, nil, err
			}
			return text(fmt.Sprintf("hello %v (%s)", r.Content["name"], r.Action)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Waits until canceled (or a minute)."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
				canceled.Add(1)
				return nil, nil, ctx.Err()
			case <-time.After(time.Minute):
				return text("slept"), nil, nil
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "canceled", Description: "How many slow calls were canceled."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(canceled.Load())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "The value of an environment variable of the server."},
		func(ctx context.Context, req *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
			return text(in.Name + "=" + os.Getenv(in.Name)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "freeze", Description: "Makes the server's process a program that holds its standard input and output and answers nothing, pings included."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "freezing on purpose")
			self, err := os.Executable()
			if err != nil {
				return nil, nil, err
			}
			return nil, nil, syscall.Exec(self, []string{self, "-freeze"}, os.Environ())
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "The server's process id, for a test that kills it."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(os.Getpid())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits with status 3, writing to stderr."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	return s
}

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on `ADDR` instead of stdio")
	freeze := flag.Bool("freeze", false, "answer nothing, until killed (what the freeze tool makes of the server)")
	flag.Parse()
	if *freeze {
		time.Sleep(24 * time.Hour)
		return
	}
	s := newServer()
	if *addr == "" {
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	log.Fatal(http.Serve(ln, mux))
}
