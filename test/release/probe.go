package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// probeTimeout bounds one run of the built server; it answers from memory
// in milliseconds, so a minute means it is stuck.
const probeTimeout = time.Minute

// listed is what a server lists: its tools and prompts, names and
// descriptions.
type listed struct {
	Tools   []tool
	Prompts []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Arguments   []struct {
			Name string `json:"name"`
		} `json:"arguments"`
	}
}

// probe runs the server binary bin as a bundle host would with no skill
// folder chosen (only "--", a scratch HOME, so only the bundled skill) and
// returns its tools/list and prompts/list, asked over stdio in one
// session of protocol 2025-11-25.
func probe(ctx context.Context, bin string) (listed, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	home, err := os.MkdirTemp("", "skilljack-release-home-")
	if err != nil {
		return listed{}, err
	}
	defer os.RemoveAll(home)
	cmd := exec.CommandContext(ctx, bin, "--")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	// stdin stays open until both answers are in: the server ends its
	// session when stdin closes.
	in, err := cmd.StdinPipe()
	if err != nil {
		return listed{}, err
	}
	defer in.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return listed{}, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return listed{}, fmt.Errorf("starting %s: %w", bin, err)
	}
	io.WriteString(in, strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"release","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"prompts/list"}`,
	}, "\n")+"\n")
	var l listed
	got := 0
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	for got < 2 && sc.Scan() {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.Result == nil {
			continue
		}
		switch msg.ID {
		case 2, 3:
			if err := json.Unmarshal(msg.Result, &l); err != nil {
				return listed{}, fmt.Errorf("reading the reply to request %d: %w", msg.ID, err)
			}
			got++
		}
	}
	in.Close()
	cmd.Wait()
	if got < 2 {
		return listed{}, fmt.Errorf("%s answered %d of tools/list and prompts/list; its stderr:\n%s", bin, got, stderr.String())
	}
	return l, nil
}

// declared picks the tools and prompts named by tools and prompts out of
// l, in that order, with the descriptions the server gives them; it fails
// when the server does not list one, so the bundle never declares what the
// server does not serve.
func declared(l listed, tools, prompts []string) ([]tool, []prompt, error) {
	var ts []tool
	for _, name := range tools {
		i := indexOf(len(l.Tools), func(i int) bool { return l.Tools[i].Name == name })
		if i < 0 {
			return nil, nil, fmt.Errorf("the server does not list the tool %q", name)
		}
		ts = append(ts, l.Tools[i])
	}
	var ps []prompt
	for _, name := range prompts {
		i := indexOf(len(l.Prompts), func(i int) bool { return l.Prompts[i].Name == name })
		if i < 0 {
			return nil, nil, fmt.Errorf("the server does not list the prompt %q", name)
		}
		// The first paragraph only: the rest of the skill prompt's
		// description is the catalog of the skills served now.
		desc, _, _ := strings.Cut(l.Prompts[i].Description, "\n\n")
		p := prompt{Name: name, Description: desc}
		for _, a := range l.Prompts[i].Arguments {
			p.Arguments = append(p.Arguments, a.Name)
		}
		p.Text = promptText(p)
		ps = append(ps, p)
	}
	return ts, ps, nil
}

// promptText is the text a manifest prompt requires (MCPB-R10): what the
// prompt asks for, with its arguments as ${arguments.X} placeholders.
func promptText(p prompt) string {
	if len(p.Arguments) == 0 {
		return "Use the " + p.Name + " prompt."
	}
	var args []string
	for _, a := range p.Arguments {
		args = append(args, "${arguments."+a+"}")
	}
	return "Load the skill " + strings.Join(args, " ") + " and follow its instructions."
}

func indexOf(n int, f func(int) bool) int {
	for i := range n {
		if f(i) {
			return i
		}
	}
	return -1
}
