// A request to the transcript to jump to its newest entry and follow new
// content again (pinned), e.g. when the person sends a message while
// scrolled up. It is a DOM event on window rather than store state: it is
// a one-off view command, nothing anyone needs to read later.

const PIN_EVENT = "caduceus:pin-transcript";

interface PinDetail { sessionId: string }

declare global {
  interface WindowEventMap { [PIN_EVENT]: CustomEvent<PinDetail> }
}

/** Asks the transcript of `sessionId` (if shown) to scroll to the bottom
 * and pin there. */
export function requestTranscriptPin(sessionId: string): void {
  window.dispatchEvent(new CustomEvent<PinDetail>(PIN_EVENT, { detail: { sessionId } }));
}

/** Calls `fn` on every pin request for `sessionId`; returns the cleanup. */
export function onTranscriptPin(sessionId: string, fn: () => void): () => void {
  const h = (e: CustomEvent<PinDetail>) => e.detail.sessionId === sessionId && fn();
  window.addEventListener(PIN_EVENT, h);
  return () => window.removeEventListener(PIN_EVENT, h);
}
