from fixtures_servers._stdio import main
from fixtures_servers.sprawl import DEFAULT_SIZE, build

main("sprawl", build, DEFAULT_SIZE)
