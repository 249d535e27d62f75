// Package browser gives the agent a headless Chromium, driven through
// chromedp: one browser per session, started by the first browser tool
// call, closed when the session has been idle for a while and at
// shutdown. Every connection the browser makes (pages, subresources,
// redirects, websockets) goes through a netguard.Proxy, so the page cannot
// reach an address the guard refuses, whatever it resolves or redirects
// to.
package browser
