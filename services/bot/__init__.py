"""The bot service: given one seat's view and a difficulty, a move. Stateless."""
