// Package httpguard is the HTTP middleware that makes Caduceus safe to run on
// a developer machine from the first start. The server drives agents that run
// tools on the host, so anything able to call its API acts with the user's
// authority. Listening on 127.0.0.1 keeps other machines out, but it does not
// keep out the browser the user is already running, which will talk to
// localhost on behalf of any web page:
//
//   - DNS rebinding: a page on evil.example re-points its own name at
//     127.0.0.1 and then reads and writes the API as if it were same-origin.
//     The browser still sends "Host: evil.example", so a loopback-bound server
//     answers only requests whose Host is a loopback name.
//   - Cross-site request forgery: any page can POST a form or a "simple"
//     fetch to http://localhost:7420 without a CORS preflight; it cannot read
//     the answer, but the agent has already been told what to do. Browsers
//     label such requests with Origin (or at least Sec-Fetch-Site), so
//     state-changing requests from a foreign origin are refused, while
//     clients that are not browsers (curl, scripts) send neither and pass.
//
// Off loopback the network itself can reach the server, so New refuses to
// build a Guard with no way to sign in: neither a bearer token
// (CADUCEUS_TOKEN) nor an enabled account. Who a request acts for, and
// whether it may, is the identity package's (and the API's route table).
// The guard also caps request bodies and
// sets defensive response headers. It never emits CORS headers: the UI is
// served from the same origin, and no other page should read the API.
package httpguard
