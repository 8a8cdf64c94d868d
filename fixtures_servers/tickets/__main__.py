from fixtures_servers._stdio import main
from fixtures_servers.tickets import DEFAULT_SIZE, build

main("tickets", build, DEFAULT_SIZE)
