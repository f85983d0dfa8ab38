-- q4: average closing price per category (winning bid = highest bid while the auction is open).
SELECT Q.category, AVG(Q.final) AS avg_final
FROM (
    SELECT MAX(B.price) AS final, A.category
    FROM auction AS A JOIN bid AS B ON A.id = B.auction
    WHERE B.dateTime BETWEEN A.dateTime AND A.expires
    GROUP BY A.id, A.category
) AS Q
GROUP BY Q.category;
