// The simple policy, for every rule set: always legal, never bold. It takes the
// first card it may play (the server's legal list already obeys a binding
// instruction); otherwise the quietest answer the view offers (pass, then fold,
// then refuse a redeal, then accept); otherwise the first action listed
// (choosing a dealer, cutting). It never raises, never sends signals or
// directives: they are legal at any time but do not pass the turn.

const QUIET_CALLS = ['CALL_PASS', 'CALL_FOLD', 'CALL_REFUSE', 'CALL_ACCEPT'];

/** An action as a request wants it: only the oneof member that is set. */
export function plain(action) {
  return { [action.kind]: action[action.kind] };
}

/** The action to submit for this view, or null if it lists none that passes the turn. */
export function chooseAction(view) {
  const moves = view.legal_actions.filter((a) => a.kind !== 'signal' && a.kind !== 'directive');
  const card = moves.find((a) => a.kind === 'play_card');
  if (card) return plain(card);
  for (const call of QUIET_CALLS) {
    const quiet = moves.find((a) => a.kind === 'call' && a.call === call);
    if (quiet) return plain(quiet);
  }
  return moves.length > 0 ? plain(moves[0]) : null;
}
