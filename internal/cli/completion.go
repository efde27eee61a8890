package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// runCompletion prints a completion script for bash, zsh or fish, made from
// the table of servers and their flags (so it cannot drift from them).
func runCompletion(env Env, args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(env.Stderr, "bulwark completion: name a shell: bash, zsh or fish (e.g. bulwark completion bash > /etc/bash_completion.d/bulwark)")
		return 2
	}
	var write func(io.Writer, []completionServer)
	switch args[0] {
	case "bash":
		write = bashCompletion
	case "zsh":
		write = zshCompletion
	case "fish":
		write = fishCompletion
	default:
		fmt.Fprintf(env.Stderr, "bulwark completion: %q is not a shell this supports: use bash, zsh or fish\n", args[0])
		return 2
	}
	write(env.Stdout, completionServers())
	return 0
}

// completionSub is a command below a first word: `authz check`,
// `authz schema`, `gateway approve`.
type completionSub struct {
	parent, name string
	flags        []*flag.Flag
}

func completionSubs() []completionSub {
	var out []completionSub
	for _, sub := range []string{"check", "schema"} {
		out = append(out, completionSub{"authz", sub, allFlags(authzFlagSet(sub, &authzCheck{}))})
	}
	fs, _ := approveFlagSet(Env{Getenv: func(string) string { return "" }}, &gatewayApprove{})
	return append(out, completionSub{"gateway", "approve", allFlags(fs)})
}

func allFlags(fs *flag.FlagSet) []*flag.Flag {
	var out []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f) })
	return out
}

func flagWords(flags []*flag.Flag) string {
	w := make([]string, len(flags))
	for i, f := range flags {
		w[i] = "-" + f.Name
	}
	return strings.Join(w, " ")
}

// subNames are the names of parent's subcommands, space-separated.
func subNames(parent string) string {
	var w []string
	for _, s := range completionSubs() {
		if s.parent == parent {
			w = append(w, s.name)
		}
	}
	return strings.Join(w, " ")
}

// subcommands are the words after `bulwark` other than the servers.
var subcommands = []string{"authz", "doctor", "help", "version", "completion"}

type completionServer struct {
	name, summary string
	flags         []*flag.Flag
}

func completionServers() []completionServer {
	var out []completionServer
	for _, c := range commands() {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.setup(fs, Env{Getenv: func(string) string { return "" }})
		s := completionServer{name: c.name, summary: c.summary}
		fs.VisitAll(func(f *flag.Flag) { s.flags = append(s.flags, f) })
		out = append(out, s)
	}
	return out
}

func (s completionServer) words() string { return flagWords(s.flags) }

func topWords(servers []completionServer) string {
	var w []string
	for _, s := range servers {
		w = append(w, s.name)
	}
	return strings.Join(append(w, subcommands...), " ")
}

func bashCompletion(w io.Writer, servers []completionServer) {
	fmt.Fprintf(w, "# bash completion for bulwark: source it, or put it in /etc/bash_completion.d/bulwark\n_bulwark() {\n  local cur=${COMP_WORDS[COMP_CWORD]}\n")
	fmt.Fprintf(w, "  if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", topWords(servers))
	fmt.Fprintf(w, "  local server=${COMP_WORDS[1]}\n  case $server in help|doctor) server=${COMP_WORDS[2]:-}; [ \"$COMP_CWORD\" -eq 2 ] && { COMPREPLY=($(compgen -W %q -- \"$cur\")); return; } ;; completion) COMPREPLY=($(compgen -W 'bash zsh fish' -- \"$cur\")); return ;; esac\n", serverNames(servers))
	fmt.Fprintf(w, "  if [ \"$COMP_CWORD\" -gt 2 ]; then case \"$server ${COMP_WORDS[2]}\" in\n")
	for _, sub := range completionSubs() {
		fmt.Fprintf(w, "    %q) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", sub.parent+" "+sub.name, flagWords(sub.flags))
	}
	fmt.Fprintf(w, "  esac; fi\n  case $server in\n    authz) [ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", subNames("authz"))
	for _, s := range servers {
		if subs := subNames(s.name); subs != "" {
			fmt.Fprintf(w, "    %s) local w=%q; [ \"$COMP_CWORD\" -eq 2 ] && w=\"%s $w\"; COMPREPLY=($(compgen -W \"$w\" -- \"$cur\")) ;;\n", s.name, s.words(), subs)
			continue
		}
		fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", s.name, s.words())
	}
	fmt.Fprintf(w, "  esac\n}\ncomplete -o default -F _bulwark bulwark\n")
}

func serverNames(servers []completionServer) string {
	var w []string
	for _, s := range servers {
		w = append(w, s.name)
	}
	return strings.Join(w, " ")
}

func zshCompletion(w io.Writer, servers []completionServer) {
	fmt.Fprintf(w, "#compdef bulwark\n# zsh completion for bulwark: put it as _bulwark in a directory on $fpath\n_bulwark() {\n")
	fmt.Fprintf(w, "  if (( CURRENT == 2 )); then compadd -- %s; return; fi\n", topWords(servers))
	fmt.Fprintf(w, "  local server=$words[2]\n  case $server in\n    help|doctor) (( CURRENT == 3 )) && { compadd -- %s; return; }; server=$words[3] ;;\n    completion) compadd -- bash zsh fish; return ;;\n  esac\n", serverNames(servers))
	fmt.Fprintf(w, "  if (( CURRENT > 3 )); then case \"$server $words[3]\" in\n")
	for _, sub := range completionSubs() {
		fmt.Fprintf(w, "    %q) compadd -- %s; return ;;\n", sub.parent+" "+sub.name, flagWords(sub.flags))
	}
	fmt.Fprintf(w, "  esac; fi\n  case $server in\n    authz) (( CURRENT == 3 )) && compadd -- %s ;;\n", subNames("authz"))
	for _, s := range servers {
		if subs := subNames(s.name); subs != "" {
			fmt.Fprintf(w, "    %s) (( CURRENT == 3 )) && compadd -- %s; compadd -- %s ;;\n", s.name, subs, s.words())
			continue
		}
		fmt.Fprintf(w, "    %s) compadd -- %s ;;\n", s.name, s.words())
	}
	fmt.Fprintf(w, "  esac\n}\ncompdef _bulwark bulwark\n")
}

func fishCompletion(w io.Writer, servers []completionServer) {
	fmt.Fprintf(w, "# fish completion for bulwark: put it in ~/.config/fish/completions/bulwark.fish\ncomplete -c bulwark -f\n")
	for _, s := range servers {
		fmt.Fprintf(w, "complete -c bulwark -n __fish_use_subcommand -a %s -d %s\n", s.name, fishQuote(s.summary))
	}
	for _, sub := range subcommands {
		fmt.Fprintf(w, "complete -c bulwark -n __fish_use_subcommand -a %s\n", sub)
	}
	fmt.Fprintf(w, "complete -c bulwark -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	fmt.Fprintf(w, "complete -c bulwark -n '__fish_seen_subcommand_from authz' -a %s\n", fishQuote(subNames("authz")))
	fmt.Fprintf(w, "complete -c bulwark -n '__fish_seen_subcommand_from gateway' -a %s\n", fishQuote(subNames("gateway")))
	for _, sub := range completionSubs() {
		for _, f := range sub.flags {
			_, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "complete -c bulwark -n '__fish_seen_subcommand_from %s; and __fish_seen_subcommand_from %s' -o %s -d %s\n", sub.parent, sub.name, f.Name, fishQuote(usage))
		}
	}
	for _, s := range servers {
		for _, f := range s.flags {
			_, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "complete -c bulwark -n '__fish_seen_subcommand_from %s' -o %s -d %s\n", s.name, f.Name, fishQuote(usage))
		}
	}
}

func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
