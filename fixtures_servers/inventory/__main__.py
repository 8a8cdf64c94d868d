from fixtures_servers._stdio import main
from fixtures_servers.inventory import DEFAULT_SIZE, build

main("inventory", build, DEFAULT_SIZE)
