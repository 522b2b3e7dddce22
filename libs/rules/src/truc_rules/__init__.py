"""truc-rules: the pure rules of the Truc family of card games.

No I/O, no clock, no global randomness: time and seeds are parameters, and the
package imports nothing but the standard library. Hidden information leaves a
rule set only through its ``view_for`` (one view per seat).

Layout (one home per rule set, beside the parts they share)::

    truc_rules/cards.py        both packs (Spanish, piquet): cards, suits, ranks, notation
    truc_rules/actions.py      the family's actions, calls, signals, directives
    truc_rules/events.py       the family's events, and who may see each
    truc_rules/errors.py       IllegalAction (with its Reason), InvalidSetup
    truc_rules/tricks.py       who wins a hand from its tricks (rules.md §3.5)
    truc_rules/rule_set.py     RuleSet, the names of the games
    truc_rules/registry.py     every rule set behind one set of functions
    truc_rules/scenario.py     the scenario runner core: fixed deals, actions, results
    truc_rules/truc_y_flou/    Truc y Flou (rules.md), the default rule set: its
                               ranking (the §3.1 trick order), options, state,
                               engine, views, codec, default actions
    truc_rules/family/         the engine of the variants.md rule sets (V1 once;
                               a Variant holds what each rule set does differently)
    truc_rules/french_truc/, sackson_truc/, partnership_truc/, catalan_truc/
                               one module per variants.md rule set, each with the
                               same API as Truc y Flou's

This module re-exports the API of the default rule set, Truc y Flou::

    t = new_game(RuleOptions(), seed=42)
    state = t.state
    seat = to_act(state)
    t = apply_action(state, seat, legal_actions(state, seat)[0])
    view = view_for(t.state, seat, t.events)
"""

from .truc_y_flou import *  # noqa: F403 - the default rule set's API, as it lists it
from .truc_y_flou import __all__ as __all__
