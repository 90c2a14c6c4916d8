package e2e

// Finding the console's controls the way a screen reader does: by role and
// accessible name, from Chromium's own accessibility tree
// (Accessibility.queryAXTree through chromedriver's CDP bridge), never by
// CSS class or test id. A control that loses its label, or whose name is
// not unique, fails the test that drives it.

import (
	"fmt"
	"strings"
	"time"
)

type axNode struct {
	Ignored bool `json:"ignored"`
	Role    struct {
		Value string `json:"value"`
	} `json:"role"`
	Name struct {
		Value string `json:"value"`
	} `json:"name"`
	BackendDOMNodeID int `json:"backendDOMNodeId"`
}

// cdp sends one Chrome DevTools Protocol command through chromedriver.
func (b *browser) cdp(cmd string, params map[string]any, out any) error {
	return b.do("POST", b.base+"/goog/cdp/execute", map[string]any{"cmd": cmd, "params": params}, out)
}

// axQuery lists the unignored nodes of role whose accessible name is name
// (role "" matches any role that is not plain text).
func (b *browser) axQuery(role, name string) ([]axNode, error) {
	var doc struct {
		Result struct {
			ObjectID string `json:"objectId"`
		} `json:"result"`
	}
	if err := b.cdp("Runtime.evaluate", map[string]any{"expression": "document"}, &doc); err != nil {
		return nil, err
	}
	params := map[string]any{"objectId": doc.Result.ObjectID}
	if name != "" {
		params["accessibleName"] = name
	}
	if role != "" {
		params["role"] = role
	}
	var res struct {
		Nodes []axNode `json:"nodes"`
	}
	if err := b.cdp("Accessibility.queryAXTree", params, &res); err != nil {
		return nil, err
	}
	var out []axNode
	for _, n := range res.Nodes {
		switch n.Role.Value {
		case "StaticText", "InlineTextBox", "LabelText", "generic", "none":
			continue
		}
		if !n.Ignored && n.BackendDOMNodeID != 0 {
			out = append(out, n)
		}
	}
	return out, nil
}

// elementOf turns an accessibility node into a WebDriver element reference:
// CDP resolves the DOM node, hands it to the page for one moment, and a
// WebDriver script returns it.
func (b *browser) elementOf(n axNode) (string, error) {
	var obj struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := b.cdp("DOM.resolveNode", map[string]any{"backendNodeId": n.BackendDOMNodeID}, &obj); err != nil {
		return "", err
	}
	if err := b.cdp("Runtime.callFunctionOn", map[string]any{
		"objectId": obj.Object.ObjectID, "functionDeclaration": "function() { window.__axFound = this; }",
	}, nil); err != nil {
		return "", err
	}
	var ref map[string]string
	if err := b.do("POST", b.base+"/execute/sync", map[string]any{
		"script": "const e = window.__axFound; delete window.__axFound; return e;", "args": []any{},
	}, &ref); err != nil {
		return "", err
	}
	if ref[elementKey] == "" {
		return "", fmt.Errorf("the page did not hand the element back")
	}
	return ref[elementKey], nil
}

// byRole waits for exactly one control of role named name and returns its
// WebDriver reference. Two of them fail at once: names must be unique.
func (b *browser) byRole(role, name string) string {
	b.t.Helper()
	var el string
	b.waitFor(fmt.Sprintf("the %s %q", role, name), 20*time.Second, func() (bool, error) {
		nodes, err := b.axQuery(role, name)
		if err != nil {
			return false, err
		}
		if len(nodes) > 1 {
			b.t.Fatalf("%d controls of role %s are named %q; accessible names must be unique", len(nodes), role, name)
		}
		if len(nodes) == 0 {
			return false, fmt.Errorf("no %s named %q", role, name)
		}
		el, err = b.elementOf(nodes[0])
		return err == nil, err
	})
	return el
}

// absent says whether no control of role is named name right now.
func (b *browser) absent(role, name string) bool {
	b.t.Helper()
	nodes, err := b.axQuery(role, name)
	if err != nil {
		b.t.Fatal(err)
	}
	return len(nodes) == 0
}

func (b *browser) clickEl(el string) {
	b.t.Helper()
	b.cmd("POST", "/element/"+el+"/click", map[string]any{}, nil)
}

// press clicks the button named name.
func (b *browser) press(name string) {
	b.t.Helper()
	b.clickEl(b.byRole("button", name))
}

// fill clears the text field named name and types text into it, as keys.
func (b *browser) fill(name, text string) {
	b.t.Helper()
	el := b.byRole("textbox", name)
	b.cmd("POST", "/element/"+el+"/clear", map[string]any{}, nil)
	b.cmd("POST", "/element/"+el+"/value", map[string]any{"text": text}, nil)
}

// keys sends keys to whatever has the focus (a keyboard user's Tab and Enter).
func (b *browser) keys(text string) {
	b.t.Helper()
	var acts []any
	for _, r := range text {
		acts = append(acts, map[string]any{"type": "keyDown", "value": string(r)}, map[string]any{"type": "keyUp", "value": string(r)})
	}
	b.cmd("POST", "/actions", map[string]any{"actions": []any{map[string]any{"type": "key", "id": "kb", "actions": acts}}}, nil)
	b.cmd("DELETE", "/actions", nil, nil)
}

const (
	keyTab   = "\ue004"
	keyEnter = "\ue007"
)

func (b *browser) text(el string) string {
	b.t.Helper()
	var s string
	b.cmd("GET", "/element/"+el+"/text", nil, &s)
	return s
}

func (b *browser) prop(el, name string) any {
	b.t.Helper()
	var v any
	b.cmd("GET", "/element/"+el+"/property/"+name, nil, &v)
	return v
}

// regionText is the text of the one element of role (status, alert).
func (b *browser) regionText(role string) string {
	b.t.Helper()
	nodes, err := b.axQuery(role, "")
	if err != nil {
		b.t.Fatal(err)
	}
	if len(nodes) != 1 {
		return ""
	}
	el, err := b.elementOf(nodes[0])
	if err != nil {
		b.t.Fatal(err)
	}
	return strings.TrimSpace(b.text(el))
}

// waitRegion waits until the role's element says something containing want.
func (b *browser) waitRegion(role, want string) string {
	b.t.Helper()
	var got string
	b.waitFor(fmt.Sprintf("%s saying %q", role, want), 30*time.Second, func() (bool, error) {
		got = b.regionText(role)
		return strings.Contains(got, want), fmt.Errorf("%s says %q", role, got)
	})
	return got
}

// focusedName is the accessible name of the focused element.
func (b *browser) focusedName() string {
	b.t.Helper()
	var ref map[string]string
	b.cmd("GET", "/element/active", nil, &ref)
	var s string
	b.cmd("GET", "/element/"+ref[elementKey]+"/computedlabel", nil, &s)
	return s
}

// controlRoles are the roles a person operates; each of their names must
// say which one it is.
var controlRoles = map[string]bool{
	"button": true, "textbox": true, "checkbox": true, "combobox": true, "link": true,
	"spinbutton": true, "searchbox": true, "radio": true, "menuitem": true,
}

// duplicateNames lists the accessible names that more than one control of
// the page carries, and the controls that carry none.
func (b *browser) duplicateNames() []string {
	b.t.Helper()
	var res struct {
		Nodes []axNode `json:"nodes"`
	}
	if err := b.cdp("Accessibility.getFullAXTree", map[string]any{}, &res); err != nil {
		b.t.Fatal(err)
	}
	seen := map[string]int{}
	var out []string
	for _, n := range res.Nodes {
		if n.Ignored || !controlRoles[n.Role.Value] || chromiumDateTimePart(n) {
			continue
		}
		if strings.TrimSpace(n.Name.Value) == "" {
			out = append(out, fmt.Sprintf("a %s without a name", n.Role.Value))
			continue
		}
		key := n.Role.Value + " " + n.Name.Value
		if seen[key]++; seen[key] == 2 {
			out = append(out, fmt.Sprintf("%s %q", n.Role.Value, n.Name.Value))
		}
	}
	return out
}

// chromiumDateTimePart is one of the fields Chromium draws inside an
// <input type="datetime-local"> (its own names, the same in every such
// input); the input itself carries the page's label.
func chromiumDateTimePart(n axNode) bool {
	for _, p := range []string{"Month", "Day", "Year", "Hours", "Minutes", "Seconds", "AM/PM", "Show local date and time picker"} {
		if strings.HasPrefix(n.Name.Value, p) && (n.Role.Value == "spinbutton" || n.Role.Value == "button") {
			return true
		}
	}
	return false
}

// uniqueNames fails the test when a control has no name or shares it.
func (b *browser) uniqueNames(where string) {
	b.t.Helper()
	if d := b.duplicateNames(); len(d) > 0 {
		b.t.Errorf("%s: controls without a unique accessible name: %v", where, d)
	}
}

// selectOption picks the option whose text is option in the select named
// name, by keyboard: the select's type-ahead, as a person would.
func (b *browser) selectOption(name, option string) {
	b.t.Helper()
	el := b.byRole("combobox", name)
	b.cmd("POST", "/element/"+el+"/value", map[string]any{"text": option}, nil)
	b.waitFor(fmt.Sprintf("%q chosen in %q", option, name), 10*time.Second, func() (bool, error) {
		var got string
		b.exec(`const s = arguments[0]; return s.options[s.selectedIndex].text;`, &got, map[string]string{elementKey: el})
		return got == option, fmt.Errorf("%q is chosen", got)
	})
}
