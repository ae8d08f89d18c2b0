package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/keys"
)

// runAccount manages accounts: edge account create|disable|enable.
func runAccount(stdin io.Reader) func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		sub, rest, err := subcommand("account", args, stderr, map[string]string{
			"create":  "Make an account; its password is read from the first line of standard input.",
			"disable": "Disable an account: its keys stop working on every edge within a key reload, and it cannot sign in.",
			"enable":  "Enable a disabled account again.",
		})
		if err != nil {
			return err
		}
		f := newFlags("account "+sub, "Manage an account in ClickHouse.")
		var ch analytics.Config
		var email string
		f.clickhouse(&ch)
		f.fs.StringVar(&email, "email", "", "the account's e-mail address")
		f.fs.SetOutput(stderr)
		if err := f.parse(rest); err != nil {
			return err
		}
		if email == "" {
			return errors.New("--email is required")
		}
		db := analytics.NewLazy(ch)
		defer db.Close()
		accts := keys.NewAccounts(db, 1, nil)
		switch sub {
		case "create":
			password, err := bufio.NewReader(stdin).ReadString('\n')
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read the password from standard input: %w", err)
			}
			email, err = accts.Create(ctx, email, strings.TrimRight(password, "\r\n"))
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "account %s created\n", email)
		case "disable", "enable":
			if err := accts.SetDisabled(ctx, email, sub == "disable"); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "account %s %sd\n", strings.ToLower(strings.TrimSpace(email)), sub)
		}
		return nil
	}
}

// runKey manages keys: edge key create|list|revoke|limit.
func runKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, rest, err := subcommand("key", args, stderr, map[string]string{
		"create": "Make a key for an account (--email) and print it: it is shown this once.",
		"list":   "List an account's keys (--email): ids, not the keys.",
		"revoke": "Revoke a key (--id): it stops working on every edge within a key reload.",
		"limit":  "Set a key's daily limit (--id, --daily; 0 restores the default).",
	})
	if err != nil {
		return err
	}
	f := newFlags("key "+sub, "Manage API keys in ClickHouse.")
	var ch analytics.Config
	var email, id string
	var daily int64 = -1
	f.clickhouse(&ch)
	f.fs.StringVar(&email, "email", "", "the account's e-mail address (create, list)")
	f.fs.StringVar(&id, "id", "", "the key's public id, such as edge_abcd2345 (revoke, limit)")
	f.fs.Int64Var(&daily, "daily", -1, "calls a UTC day the key may make (limit); 0: the default")
	f.fs.SetOutput(stderr)
	if err := f.parse(rest); err != nil {
		return err
	}
	need := map[string]string{"create": email, "list": email, "revoke": id, "limit": id}[sub]
	if need == "" {
		return fmt.Errorf("%s needs %s", sub, map[string]string{"create": "--email", "list": "--email", "revoke": "--id", "limit": "--id"}[sub])
	}
	db := analytics.NewLazy(ch)
	defer db.Close()
	accts := keys.NewAccounts(db, 1, nil)
	switch sub {
	case "create":
		key, row, err := accts.CreateKey(ctx, email)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "key %s made for %s; it is shown this once and works on every edge within a key reload:\n", row.ID, row.Email)
		fmt.Fprintln(stdout, key)
	case "list":
		rows, err := accts.Keys(ctx, email)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tCREATED\tSTATE\tDAILY LIMIT")
		for _, k := range rows {
			state, limit := "active", "default"
			if k.Revoked {
				state = "revoked"
			}
			if k.DailyLimit > 0 {
				limit = fmt.Sprint(k.DailyLimit)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", k.ID, k.CreatedAt.UTC().Format(time.RFC3339), state, limit)
		}
		return w.Flush()
	case "revoke":
		if err := accts.Revoke(ctx, "", id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "key %s revoked\n", id)
	case "limit":
		if daily < 0 {
			return keys.ErrBadLimit
		}
		if err := accts.SetLimit(ctx, id, uint64(daily)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "key %s: daily limit %d\n", id, daily)
	}
	return nil
}

// subcommand splits off args' subcommand, one of subs, or prints them.
func subcommand(cmd string, args []string, stderr io.Writer, subs map[string]string) (string, []string, error) {
	if len(args) > 0 {
		if _, ok := subs[args[0]]; ok {
			return args[0], args[1:], nil
		}
	}
	fmt.Fprintf(stderr, "usage: edge %s <subcommand> [flags]\n\nsubcommands:\n", cmd)
	for _, name := range []string{"create", "list", "disable", "enable", "revoke", "limit"} {
		if s, ok := subs[name]; ok {
			fmt.Fprintf(stderr, "  %-8s %s\n", name, s)
		}
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 0 {
			return "", nil, flag.ErrHelp
		}
		return "", nil, fmt.Errorf("name a subcommand")
	}
	return "", nil, fmt.Errorf("unknown subcommand %q", args[0])
}
