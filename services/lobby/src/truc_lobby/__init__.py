"""truc-lobby: matchmaking into two teams of three."""
