// LobbyService: sign in as a guest, create a ticket, watch it until matched.

import { describe, isTransient } from './errors.js';
import { serverStream, sleep, unary } from './protocol.js';

export class TicketClosed extends Error {}

/** 'TICKET_STATE_QUEUED' -> 'queued'. */
export function stateText(state) {
  return state.replace('TICKET_STATE_', '').toLowerCase().replaceAll('_', ' ');
}

/** SignInGuest: {player, token}. */
export async function signInGuest(lobby, displayName) {
  const reply = await unary(lobby, 'SignInGuest', { display_name: displayName });
  return { player: reply.player, token: reply.token };
}

/** CreateTicket for the caller alone, asking for these rule options. */
export async function createTicket(lobby, token, options) {
  const reply = await unary(lobby, 'CreateTicket', { party: [], options }, { token });
  return reply.ticket;
}

/**
 * WatchTicket until the ticket is MATCHED (returned) or closed otherwise
 * (TicketClosed). A dropped stream is watched again: watching is also what
 * keeps a queued ticket alive.
 */
export async function waitMatched(lobby, token, name, log, state = 'TICKET_STATE_QUEUED') {
  let last = state;
  for (let attempt = 0; ; attempt++) {
    try {
      const call = serverStream(lobby, 'WatchTicket', { name }, { token });
      for await (const { ticket } of call) {
        if (ticket.state === 'TICKET_STATE_MATCHED') {
          call.cancel();
          return ticket;
        }
        if (ticket.state === 'TICKET_STATE_CANCELLED' || ticket.state === 'TICKET_STATE_EXPIRED') {
          throw new TicketClosed(`ticket ${name} ${ticket.state}`);
        }
        if (ticket.state !== last) log(`ticket ${name}: ${stateText(ticket.state)}`);
        last = ticket.state;
      }
      // The stream ended without a match: ask once where the ticket stands.
      const { ticket } = await unary(lobby, 'GetTicket', { name }, { token });
      if (ticket.state === 'TICKET_STATE_MATCHED') return ticket;
      if (ticket.state !== 'TICKET_STATE_QUEUED') {
        throw new TicketClosed(`ticket ${name} ${ticket.state}`);
      }
    } catch (error) {
      if (!isTransient(error) || attempt >= 20) throw error;
      log(`ticket watch dropped (${describe(error)}); watching again`);
      await sleep(Math.min(2000, 100 * 2 ** attempt));
    }
  }
}
