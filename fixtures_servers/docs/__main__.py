from fixtures_servers._stdio import main
from fixtures_servers.docs import DEFAULT_SIZE, build

main("docs", build, DEFAULT_SIZE)
