"""truc-lobby: matchmaking into two teams of every rule set (3 v 3, 2 v 2, 1 v 1)."""
